// Which cross-checks a verdict gets (pure logic, tests/service_logic_test.cc): formal on
// every design that passes simulation, and with formal_failures on those that compiled, ran and
// failed (could the testbench be wrong about them?); synthesis on passing designs. Each design
// that gets a check gets its own, with its own budget (nothing is skipped for another's sake).
#pragma once

#include "harness/cross_check.h"
#include "harness/grader.h"

namespace evald {

struct CrossCheckPlan {
  bool formal = false;
  bool synthesis = false;
  bool any() const { return formal || synthesis; }
};

CrossCheckPlan PlanCrossChecks(const CrossCheckOptions& options, const Verdict& verdict);

}  // namespace evald
