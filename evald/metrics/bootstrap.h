// Percentile bootstrap over problems for a mean of per-problem scores. Problems, not samples,
// are the unit that varies between benchmark runs' conclusions, so they are what is resampled.
#pragma once

#include <cstdint>
#include <vector>

namespace evald {

struct Interval {
  double low = 0;
  double high = 0;
};

struct BootstrapOptions {
  int resamples = 10000;
  double confidence = 0.95;
  uint64_t seed = 0x5eed;  // fixed: the same report twice gives the same interval
};

// Interval of the mean of `values`. A single value (or none) gives a degenerate interval.
Interval BootstrapMeanInterval(const std::vector<double>& values,
                               const BootstrapOptions& options = {});

}  // namespace evald
