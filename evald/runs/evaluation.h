// `evald eval` as a library: the one run pipeline over samples held in memory. Plan (problems,
// indices) -> extract -> grade (GradingSession: one simulation per distinct (problem, code), the
// verdict cache, the reference's calibration run) -> score -> report. The daemon runs the same
// stages, persisting each sample as it is graded (evald/server/run_manager.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "datasets/dataset.h"
#include "evald/eval/samples_reader.h"
#include "evald/proto/eval.pb.h"
#include "evald/runs/cross_check_settings.h"
#include "evald/runs/grading_session.h"
#include "harness/simulator.h"
#include "sandbox/sandbox_options.h"

namespace evald {

class Store;

struct EvalOptions {
  SimulatorKind simulator = SimulatorKind::kIcarus;
  bool auto_simulator = false;  // --simulator auto (see GradingOptions)
  std::vector<int> ks = {1, 5};
  int jobs = 2;
  std::optional<uint32_t> simulate_timeout_ms;  // fixed limit instead of the calibrated one
  // Run wrong designs to the end (exact mismatch counts) instead of to their first mismatch.
  bool exact_mismatch_counts = false;
  // Formal equivalence and synthesis beside simulation; the default is the CLI's and the API's.
  CrossCheckOptions cross = DefaultCrossCheckOptions();
  SandboxOptions sandbox;
  // Verdict cache: calibrations and verdicts found here are not simulated again; new ones are
  // added. Optional.
  Store* store = nullptr;
  // Where simulations run (local sandboxes or a Slurm array); the dataset is filled in.
  ExecutorOptions executor;
  // Called as samples get their verdicts: (graded, total). From worker threads.
  std::function<void(int, int)> progress;
};

// The grading stage's options for these evaluation options (also the dataset audit's).
GradingOptions GradingOptionsOf(const EvalOptions& options);

// Runs the evaluation. Fails only when it cannot run at all (no sandbox, no simulator); bad
// sample lines are reported in the result and the rest is graded.
StatusOr<v1::EvalReport> Evaluate(const Dataset& dataset, const SamplesFile& samples,
                                  const EvalOptions& options);

// `evald dataset check`: every reference against its testbench.
StatusOr<v1::DatasetCheckReport> CheckDataset(const Dataset& dataset, const EvalOptions& options);

}  // namespace evald
