// `evald eval` as a library: samples + dataset -> extracted code -> one simulation per distinct
// (problem, code) -> verdicts -> per-problem and overall pass@k with confidence intervals.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "datasets/dataset.h"
#include "evald/eval/samples_reader.h"
#include "evald/proto/eval.pb.h"
#include "harness/grader.h"
#include "harness/simulator.h"
#include "sandbox/sandbox_options.h"

namespace evald {

class Store;

struct EvalOptions {
  SimulatorKind simulator = SimulatorKind::kIcarus;
  std::vector<int> ks = {1, 5};
  int jobs = 2;
  std::optional<uint32_t> simulate_timeout_ms;  // fixed limit instead of the calibrated one
  SandboxOptions sandbox;
  // Verdict cache: calibrations and verdicts found here are not simulated again; new ones are
  // added. Optional.
  Store* store = nullptr;
  // Called from worker threads as simulations finish: (done, total).
  std::function<void(int, int)> progress;
};

// Runs the evaluation. Fails only when it cannot run at all (no sandbox, no simulator); bad
// sample lines are reported in the result and the rest is graded.
StatusOr<v1::EvalReport> Evaluate(const Dataset& dataset, const SamplesFile& samples,
                                  const EvalOptions& options);

class SandboxPool;

// Building blocks shared with the daemon's run executor.
struct CalibrationSet {
  std::map<std::string, Calibration> calibration;
  std::map<std::string, char> letters;              // the reference run's category
  std::map<std::string, DesignRun> reference_runs;  // fresh runs only (not from the store)
  int simulated = 0;
};
CalibrationSet CalibrateWithCache(SandboxPool& pool, SimulatorKind simulator,
                                  const SimulatorLimits& base, const std::string& version,
                                  const std::vector<const Problem*>& problems, Store* store);
v1::ProblemCalibration CalibrationProto(const std::string& name, const Calibration& c, char letter);
Calibration CalibrationFromProto(const v1::ProblemCalibration& p);
std::string SimulatorVersion(SandboxPool& pool, SimulatorKind kind);
Status CheckSimulatorAllowed(const SandboxPool& pool, SimulatorKind kind);
// The verdict fields of a sample result (what the verdict cache keeps), and back.
v1::SampleResult VerdictFields(const Verdict& v);
Verdict FromVerdictFields(const v1::SampleResult& r);

// Fills the per-problem results and summary of `report` from its samples (also used when
// reports are merged or re-scored).
void ComputeMetrics(const std::vector<int>& ks, v1::EvalReport* report);

// `evald dataset check`: every reference against its testbench.
StatusOr<v1::DatasetCheckReport> CheckDataset(const Dataset& dataset, const EvalOptions& options);

}  // namespace evald
