// Which cross-checks a verdict gets (pure logic, tests/cross_check_policy_test.cc): formal on
// every design that passes simulation, and with formal_failures on those that compiled, ran and
// failed (could the testbench be wrong about them?); synthesis on passing designs. And the
// per-problem budget rule: after `give_up_after` checks of one problem ran out of their time in
// a session, its further checks are not tried (said so, never cached).
#pragma once

#include <map>
#include <string>

#include "base/thread_annotations.h"
#include "harness/cross_check.h"
#include "harness/grader.h"

namespace evald {

struct CrossCheckPlan {
  bool formal = false;
  bool synthesis = false;
  bool any() const { return formal || synthesis; }
};

CrossCheckPlan PlanCrossChecks(const CrossCheckOptions& options, const Verdict& verdict);

// The give-up rule's bookkeeping, shared by a session's threads.
class FormalBudget {
 public:
  explicit FormalBudget(int give_up_after)
      : give_up_after_(give_up_after < 1 ? 1 : give_up_after) {}
  // Checks of `problem` that ran out of their time so far when that reaches the limit, else 0.
  int Exhausted(const std::string& problem) const EXCLUDES(mu_);
  void Spent(const std::string& problem) EXCLUDES(mu_);

 private:
  const int give_up_after_;
  mutable Mutex mu_;
  std::map<std::string, int> out_of_budget_ GUARDED_BY(mu_);
};

}  // namespace evald
