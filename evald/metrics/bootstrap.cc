#include "evald/metrics/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace evald {

Interval BootstrapMeanInterval(const std::vector<double>& values, const BootstrapOptions& options) {
  if (values.empty()) return {};
  double mean = std::accumulate(values.begin(), values.end(), 0.0) / values.size();
  if (values.size() == 1 || options.resamples <= 0) return {mean, mean};
  std::mt19937_64 rng(options.seed);
  std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
  std::vector<double> means(static_cast<size_t>(options.resamples));
  for (auto& m : means) {
    double s = 0;
    for (size_t i = 0; i < values.size(); ++i) s += values[pick(rng)];
    m = s / values.size();
  }
  std::sort(means.begin(), means.end());
  double alpha = (1.0 - options.confidence) / 2.0;
  auto at = [&](double q) {
    // Nearest-rank percentile.
    size_t idx = static_cast<size_t>(
        std::clamp(std::ceil(q * means.size()) - 1.0, 0.0, static_cast<double>(means.size() - 1)));
    return means[idx];
  };
  return {at(alpha), at(1.0 - alpha)};
}

}  // namespace evald
