#include "harness/verdict_key.h"

#include "base/hash.h"

namespace evald {

namespace {
std::string LimitSignature(const SimulatorLimits& limits) {
  // The job's command lines are fixed per simulator (simulator.cc); its limits vary.
  return std::to_string(limits.compile_timeout_ms) + "/" +
         std::to_string(limits.simulate_timeout_ms) + "/" +
         std::to_string(limits.compile_address_space) + "/" +
         std::to_string(limits.simulate_address_space) + "/" +
         std::to_string(limits.max_output_bytes) + "/" + std::to_string(limits.file_size_bytes) +
         "/" + std::to_string(limits.max_processes) +
         // Appended only when set: keys of full runs stay what they were.
         (limits.stop_at_first_mismatch ? "/first-mismatch" : "");
}

// Appended only for a problem graded other than verilog-eval's way: keys of verilog-eval
// problems stay what they were.
std::string SetupSignature(const Problem& problem) {
  const std::string signature = GradingSetupSignature(problem.setup);
  return signature.empty() ? "" : "/setup:" + signature;
}
}  // namespace

std::string CalibrationKey(SimulatorKind simulator, const std::string& simulator_version,
                           const SimulatorLimits& limits, const Problem& problem) {
  return "cal-" + Sha256OfFields({"evald-calibration", std::to_string(kGradingRulesVersion),
                                  SimulatorName(simulator), simulator_version,
                                  LimitSignature(limits) + SetupSignature(problem),
                                  problem.testbench, problem.reference});
}

std::string VerdictKey(SimulatorKind simulator, const std::string& simulator_version,
                       const SimulatorLimits& limits, const Problem& problem,
                       const std::string& code) {
  std::string limit_sig = LimitSignature(limits) + SetupSignature(problem);
  return Sha256OfFields({"evald-verdict", std::to_string(kGradingRulesVersion),
                         SimulatorName(simulator), simulator_version, limit_sig, problem.testbench,
                         problem.reference, code});
}

}  // namespace evald
