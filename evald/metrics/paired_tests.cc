#include "evald/metrics/paired_tests.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

namespace evald {

double SignTestP(int better, int worse) {
  int n = better + worse;
  if (n == 0) return 1.0;
  int extreme = std::min(better, worse);
  // P(X <= extreme) for X ~ Bin(n, 1/2), via log-space terms; doubled for two sides.
  double tail = 0;
  for (int i = 0; i <= extreme; ++i) {
    double log_term =
        std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0);
    tail += std::exp(log_term);
  }
  return std::min(1.0, 2.0 * tail);
}

double SignFlipPermutationP(const std::vector<int64_t>& differences, int64_t max_range) {
  std::vector<int64_t> mags;
  int64_t observed = 0;
  for (int64_t d : differences) {
    observed += d;
    if (d != 0) mags.push_back(std::llabs(d));
  }
  if (mags.empty()) return 1.0;
  const int64_t total = std::accumulate(mags.begin(), mags.end(), int64_t{0});
  if (2 * total + 1 > max_range) return -1;
  // dist[s + total] = P(sum of random-signed magnitudes == s), built one magnitude at a time.
  std::vector<double> dist(static_cast<size_t>(2 * total + 1), 0.0), next(dist.size());
  dist[static_cast<size_t>(total)] = 1.0;
  int64_t reach = 0;
  for (int64_t m : mags) {
    std::fill(next.begin(), next.end(), 0.0);
    for (int64_t s = -reach; s <= reach; ++s) {
      double p = dist[static_cast<size_t>(s + total)];
      if (p == 0) continue;
      next[static_cast<size_t>(s + m + total)] += 0.5 * p;
      next[static_cast<size_t>(s - m + total)] += 0.5 * p;
    }
    reach += m;
    dist.swap(next);
  }
  const int64_t obs = std::llabs(observed);
  double p = 0;
  for (int64_t s = -total; s <= total; ++s) {
    if (std::llabs(s) >= obs) p += dist[static_cast<size_t>(s + total)];
  }
  return std::min(1.0, p);
}

}  // namespace evald
