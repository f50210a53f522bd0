// What a grading session runs on: the process's resources, filled once by the CLI or the daemon,
// as opposed to the settings a run states (grading_settings.h), which travel with the run.
#pragma once

#include "base/cancel_token.h"
#include "evald/runs/grading_in_flight.h"
#include "evald/runs/run_progress.h"
#include "evald/runs/simulation_executor.h"
#include "sandbox/sandbox_options.h"

namespace evald {

class Store;

struct GradingResources {
  SandboxOptions sandbox;
  int jobs = 2;  // sandboxes
  // Verdicts, calibrations, cross-checks and tool versions found here are not worked out
  // again; new ones are added. Optional.
  Store* store = nullptr;
  GradingInFlight* guard = nullptr;     // the daemon's crash-loop guard (optional)
  const CancelToken* cancel = nullptr;  // the run's (optional: never stopped)
  // Where the simulations no cache answers run: unset, this process's sandboxes; set, the
  // executor it makes (evald/cluster/slurm_executor.h).
  RemoteExecutorFactory remote;
  // Hears of calibration's progress (optional; the sinks report sampling and grading).
  ProgressFn progress;
};

}  // namespace evald
