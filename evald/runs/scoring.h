// The scoring stage: per-problem counts and pass@k, overall pass@k with bootstrap intervals,
// the benchmark's own pass rate, from a report's graded samples.
#pragma once

#include <string_view>
#include <vector>

#include "base/status.h"

#include "evald/proto/eval.pb.h"

namespace evald {

// Fills the per-problem results and summary of `report` from its samples and calibration (also
// used when reports are merged or re-scored).
void ComputeMetrics(const std::vector<int>& ks, v1::EvalReport* report);

// A pass that counts for strict pass@k in a report graded with formal checks: it passed
// simulation and formal proved it equivalent or found no difference within its bound. A pass
// formal refuted is wrong; one it could not judge (unknown, or no check on record) is
// "unverified": counted apart, never strict ("could not tell" is no pass).
bool StrictPass(const v1::SampleResult& s);
bool UnverifiedPass(const v1::SampleResult& s);

// The report as the chosen metric sees it: "simulation" (the benchmark's rule) unchanged;
// "strict" with every pass that is not a StrictPass counted as a failure, and its metrics
// computed again, so that compare and gate judge "simulation, and formal agrees". A report
// graded without formal checks has no strict view (InvalidArgument).
StatusOr<v1::EvalReport> ReportForMetric(v1::EvalReport report, std::string_view metric);

}  // namespace evald
