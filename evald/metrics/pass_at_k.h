// The unbiased pass@k estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained
// on Code"): with n samples of which c pass, pass@k = 1 - C(n-c, k) / C(n, k), computed as the
// product 1 - prod_{i=n-c+1}^{n} (1 - k/i), which never forms the huge binomials.
#pragma once

#include <optional>
#include <vector>

namespace evald {

// nullopt when k > n (undefined for that problem) or the counts are inconsistent.
std::optional<double> PassAtK(int n, int c, int k);

struct ProblemCounts {
  int n = 0;
  int c = 0;
};

// Mean over problems; problems with n < k are skipped (nullopt when none qualifies).
std::optional<double> MeanPassAtK(const std::vector<ProblemCounts>& problems, int k);

}  // namespace evald
