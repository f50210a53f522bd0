// `evald plan` and POST /v1/plan: a power plan from a report (or a pair of reports) or a
// hypothetical pass@1, answered for both questions with its method and assumptions spelled out.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "base/status.h"
#include "evald/proto/compare.pb.h"
#include "evald/proto/eval.pb.h"

namespace evald {

struct PlanInputs {
  const v1::EvalReport* a = nullptr;  // the baseline's per-problem rates
  const v1::EvalReport* b = nullptr;  // with a: tau and the default delta from the pair
  double pass_at_1 = -1;              // hypothetical baseline (without a report)
  int problems = 0;
  double delta = 0;  // 0 with two reports: their observed difference
  double alpha = 0.05;
  double power = 0.8;
  std::optional<double> tau;  // default: estimated from the pair, else kDefaultTau
  int n = 0;                  // evaluation size for the MDE (0: the report's, else 20)
  int simulations = 2000;
  double logit_sd = 2.5;  // hypothetical baseline's spread of per-problem rates
};

// The middle of what real pairs of models showed here: per-problem differences with an SD of
// 0.14-0.26, of which sampling explained 15-53%, leaving 0.10-0.24 between problems.
inline constexpr double kDefaultTau = 0.15;

// Planning cost grows with problems x simulations: benchmarks have hundreds of problems.
inline constexpr int kMaxPlanProblems = 5000;

StatusOr<v1::PowerPlan> MakePowerPlan(const PlanInputs& inputs);

void PrintPowerPlan(const v1::PowerPlan& plan, std::ostream& out);

}  // namespace evald
