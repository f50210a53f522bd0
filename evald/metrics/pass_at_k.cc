#include "evald/metrics/pass_at_k.h"

namespace evald {

std::optional<double> PassAtK(int n, int c, int k) {
  if (n <= 0 || k <= 0 || c < 0 || c > n || k > n) return std::nullopt;
  if (n - c < k) return 1.0;  // every draw of k contains a passing sample
  double fail_all = 1.0;
  for (int i = n - c + 1; i <= n; ++i) fail_all *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - fail_all;
}

std::optional<double> MeanPassAtK(const std::vector<ProblemCounts>& problems, int k) {
  double sum = 0;
  int count = 0;
  for (const auto& p : problems) {
    auto v = PassAtK(p.n, p.c, k);
    if (!v) continue;
    sum += *v;
    ++count;
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

}  // namespace evald
