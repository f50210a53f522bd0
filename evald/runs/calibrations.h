// The calibration of a session's problems: each reference run as the design through exactly
// the path samples take (harness/calibration.h), once per problem and simulator (the store
// keeps them; a cluster worker is given its submitter's). With --simulator auto a problem whose
// reference fails with the primary simulator is calibrated with the other one too, and graded
// with it where it passes there. Fresh calibration runs are kept, so that a sample whose code is
// the reference's is classified from it without another simulation.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/cancel_token.h"
#include "datasets/dataset.h"
#include "evald/proto/eval.pb.h"
#include "evald/runs/run_progress.h"
#include "evald/runs/toolchain.h"
#include "evald/runs/verdict_cache.h"
#include "harness/grader.h"

namespace evald {

class Calibrations {
 public:
  using Given = std::map<std::string, v1::ProblemCalibration>;

  // `cancel` (optional): once stopped, no further reference is simulated (a run cancelled while
  // it calibrates ends within one reference's time) and stopped() says the records are partial.
  // `progress` (optional) hears of each reference simulated.
  Calibrations(SandboxPool& pool, VerdictCache& cache, std::optional<uint32_t> fixed_timeout_ms,
               const CancelToken* cancel, ProgressFn progress = nullptr)
      : pool_(pool),
        cache_(cache),
        fixed_timeout_ms_(fixed_timeout_ms),
        cancel_(cancel),
        progress_(std::move(progress)) {}

  // Calibrates `problems` with simulator `index` of `tools`; returns those whose reference
  // fails there (ungradable with it). Nothing once stopped: the records are then incomplete,
  // and the session must not grade with them.
  std::vector<const Problem*> Calibrate(const Toolchain& tools, size_t index,
                                        const std::vector<const Problem*>& problems,
                                        const Given& given);
  // --simulator auto: `failing` (ungradable with simulator 0) graded with simulator 1 where
  // their reference passes there; the others keep simulator 0's story.
  void FallBack(const Toolchain& tools, const std::vector<const Problem*>& failing,
                const Given& given);

  bool Has(const std::string& problem) const { return calibration_.count(problem) > 0; }
  const Calibration& Of(const std::string& problem) const { return calibration_.at(problem); }
  // The simulator (index into the toolchain) that grades `problem`.
  size_t SimulatorOf(const std::string& problem) const;
  // The reference's own run when this session calibrated it (nullptr otherwise).
  const DesignRun* ReferenceRun(const std::string& problem) const;
  // Every problem's calibration as reports keep it, by name.
  const std::map<std::string, v1::ProblemCalibration>& records() const { return records_; }
  int simulated() const { return simulated_; }
  bool stopped() const { return cancel_ != nullptr && cancel_->stopped(); }

 private:
  SandboxPool& pool_;
  VerdictCache& cache_;
  std::optional<uint32_t> fixed_timeout_ms_;
  const CancelToken* cancel_;
  ProgressFn progress_;
  std::map<std::string, Calibration> calibration_;
  std::map<std::string, DesignRun> reference_runs_;  // fresh calibrations only
  std::map<std::string, v1::ProblemCalibration> records_;
  std::map<std::string, size_t> graded_with_;  // absent: simulator 0
  int simulated_ = 0;
};

}  // namespace evald
