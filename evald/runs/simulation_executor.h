// Where the simulations no cache answers run. The grading session hands each one to an
// executor and records what comes back; it does not care where the work happened:
//  - local_executor.h: this process's sandboxes (the default);
//  - evald/cluster/slurm_executor.h: a Slurm job array of `evald worker` tasks.
// An executor answers every job exactly once, a fault (GradeOutcome::fault) where it could not
// grade it, and returns the verdict with its cross-checks where the session wants them.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/cancel_token.h"
#include "base/status.h"
#include "datasets/dataset.h"
#include "evald/proto/worker.pb.h"
#include "evald/runs/grade_outcome.h"

namespace evald {

struct SimulationJob {
  const Problem* problem = nullptr;
  std::string code;
  std::string key;  // the verdict key the session computed
  SampleRef ref;
};

class SimulationExecutor {
 public:
  using Done = std::function<void(GradeOutcome&)>;
  virtual ~SimulationExecutor() = default;
  // From any thread; `done` runs once, on the executor's thread or the caller's. Jobs submitted
  // after the session's token stopped are dropped (their `done` never runs).
  virtual void Submit(SimulationJob job, Done done) = 0;
  // Blocks until every job submitted so far is answered (or dropped).
  virtual void Drain() = 0;
};

// What a remote executor needs from the session: how to grade (settings, tool versions and the
// calibrations, which the workers use instead of calibrating again) and where the dataset is.
struct RemoteExecutorContext {
  v1::WorkerSpec spec;
  const CancelToken* cancel = nullptr;
};

using RemoteExecutorFactory =
    std::function<StatusOr<std::unique_ptr<SimulationExecutor>>(RemoteExecutorContext)>;

}  // namespace evald
