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

int FormalBudget::Exhausted(const std::string& problem) const {
  MutexLock lock(mu_);
  auto it = out_of_budget_.find(problem);
  const int spent = it == out_of_budget_.end() ? 0 : it->second;
  return spent >= give_up_after_ ? spent : 0;
}

void FormalBudget::Spent(const std::string& problem) {
  MutexLock lock(mu_);
  ++out_of_budget_[problem];
}

}  // namespace evald
