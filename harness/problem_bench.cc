#include "harness/problem_bench.h"

#include "base/verilog_identifier.h"
#include "harness/self_checking_bench.h"

namespace evald {

std::string ReferenceDesign(const Problem& problem) {
  const GradingSetup& setup = problem.setup;
  if (setup.IsVerilogEval()) return ReferenceAsDesign(problem.reference);
  if (setup.reference_module == setup.design_module) return problem.reference;
  return RenameIdentifier(problem.reference, setup.reference_module, setup.design_module);
}

StatusOr<HardenedBench> HardenFor(const Problem& problem, const std::string& nonce,
                                  bool stop_at_first_mismatch) {
  if (problem.setup.pass_signal == PassSignal::kPassLine)
    return HardenSelfCheckingBench(problem, nonce);
  return HardenTestbench(problem.testbench, problem.reference, nonce, stop_at_first_mismatch);
}

}  // namespace evald
