// Simulations on a Slurm cluster (docs/scale-out.md): the grading session's executor
// (evald/runs/simulation_executor.h) over a SlurmDispatcher - the jobs no cache answers go out
// as one job array of `evald worker` tasks over a shared spool, and come back as verdicts with
// their cross-checks. Calibration, cache lookups and the cross-checks of cached verdicts stay
// with the session.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "evald/cluster/slurm_dispatch.h"
#include "evald/runs/simulation_executor.h"

namespace evald {

// Where the simulations no cache answers run: this process's sandboxes ("local"), or a Slurm
// job array ("slurm").
struct ExecutorOptions {
  std::string executor = "local";  // "local" | "slurm"
  SlurmDispatchOptions slurm;
  bool remote() const { return executor == "slurm"; }
};

// "local" | "slurm": refuses anything else, and slurm without an absolute spool.
Status ValidateExecutor(const ExecutorOptions& options);

// The factory a grading session's resources take (GradingResources::remote): unset for local.
RemoteExecutorFactory ExecutorFactoryFor(const ExecutorOptions& options);

class SlurmExecutor : public SimulationExecutor {
 public:
  SlurmExecutor(const SlurmDispatchOptions& options, RemoteExecutorContext context);
  Status Start() { return dispatcher_.Start(); }
  void Submit(SimulationJob job, Done done) override;
  void Drain() override { dispatcher_.Drain(); }

 private:
  SlurmDispatcher dispatcher_;
};

}  // namespace evald
