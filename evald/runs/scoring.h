// The scoring stage: per-problem counts and pass@k, overall pass@k with bootstrap intervals,
// the benchmark's own pass rate, from a report's graded samples.
#pragma once

#include <vector>

#include "evald/proto/eval.pb.h"

namespace evald {

// Fills the per-problem results and summary of `report` from its samples and calibration (also
// used when reports are merged or re-scored).
void ComputeMetrics(const std::vector<int>& ks, v1::EvalReport* report);

}  // namespace evald
