// The default executor: simulations in this process's sandboxes (the session's pool), each
// under the daemon's crash guard when there is one, with its cross-checks run on the same
// sandbox over the text that was just compiled.
#pragma once

#include "evald/runs/calibrations.h"
#include "evald/runs/cross_check_runner.h"
#include "evald/runs/simulation_executor.h"
#include "evald/runs/toolchain.h"

namespace evald {

class LocalExecutor : public SimulationExecutor {
 public:
  LocalExecutor(SandboxPool& pool, const Toolchain& tools, const Calibrations& calibrations,
                CrossCheckRunner& cross, GradingInFlight* guard, const CancelToken* cancel)
      : pool_(pool),
        tools_(tools),
        calibrations_(calibrations),
        cross_(cross),
        guard_(guard),
        cancel_(cancel) {}

  void Submit(SimulationJob job, Done done) override;
  void Drain() override { pool_.Wait(); }

 private:
  void Simulate(SandboxWorker& worker, const SimulationJob& job, GradeOutcome* out);
  // The guard's permission to simulate; false (and `out` a refusal) when it refuses.
  bool Admitted(const SimulationJob& job, GradeOutcome* out);

  SandboxPool& pool_;
  const Toolchain& tools_;
  const Calibrations& calibrations_;
  CrossCheckRunner& cross_;
  GradingInFlight* guard_;
  const CancelToken* cancel_;
};

}  // namespace evald
