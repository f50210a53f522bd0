// Exact paired tests over problems.
#pragma once

#include <cstdint>
#include <vector>

namespace evald {

// Two-sided exact sign test: `better` and `worse` counts, ties excluded. P(|X - n/2| >= obs)
// under Binomial(better + worse, 1/2). 1.0 when there is no untied pair.
double SignTestP(int better, int worse);

// Two-sided exact sign-flip permutation test for integer paired differences: the probability,
// under random signs, of a sum at least as far from 0 as the observed one. Exact by dynamic
// programming over the sums; fails (returns -1) if the sum range exceeds max_range.
double SignFlipPermutationP(const std::vector<int64_t>& differences, int64_t max_range = 50000000);

}  // namespace evald
