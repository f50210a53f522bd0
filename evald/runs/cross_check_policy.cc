#include "evald/runs/cross_check_policy.h"

#include "harness/failure_category.h"

namespace evald {

CrossCheckPlan PlanCrossChecks(const CrossCheckOptions& options, const Verdict& v) {
  CrossCheckPlan plan;
  const bool ran_and_failed = v.category == category::kRuntimeMismatch ||
                              v.category == category::kResetMismatch ||
                              v.category == category::kTimeout;
  plan.formal = options.formal && (v.passed || (options.formal_failures && ran_and_failed));
  plan.synthesis = options.synthesis && v.passed;
  return plan;
}

}  // namespace evald
