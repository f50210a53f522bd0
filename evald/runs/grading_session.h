// The grading stage of the one run pipeline, shared by `evald eval`, `evald run`, the daemon and
// a cluster worker. A session grades with one set of settings (grading_settings.h) on the
// process's resources (grading_resources.h). Opening it learns the tools' versions
// (toolchain.h) and calibrates the problems (calibrations.h); Grade() then answers each
// (problem, code), in this order:
//   1. the same code graded earlier in this session (or under way: it waits for that one);
//   2. the verdict cache (verdict_cache.h);
//   3. the reference's own text: classified from its calibration run;
//   4. a simulation by the executor (local sandboxes or a cluster, simulation_executor.h).
// Verdicts and cross-checks (cross_check_runner.h) go into the caches as they come. Sandboxes
// start only when something has to run: a session every cache answers starts none.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/thread_annotations.h"
#include "datasets/dataset.h"
#include "evald/proto/eval.pb.h"
#include "evald/runs/calibrations.h"
#include "evald/runs/cross_check_runner.h"
#include "evald/runs/grade_outcome.h"
#include "evald/runs/grading_resources.h"
#include "evald/runs/simulation_executor.h"
#include "evald/runs/toolchain.h"
#include "evald/runs/verdict_cache.h"

namespace evald {

class GradingSession {
 public:
  using Done = std::function<void(GradeOutcome&)>;

  // `settings` are normalised (grading_settings.h); `given`: calibrations made elsewhere (a
  // cluster worker grading with its submitter's), used instead of calibrating.
  static StatusOr<std::unique_ptr<GradingSession>> Open(const v1::GradingSettings& settings,
                                                        const GradingResources& resources,
                                                        const Dataset& dataset,
                                                        const std::vector<const Problem*>& problems,
                                                        const Calibrations::Given& given = {});
  ~GradingSession();
  GradingSession(const GradingSession&) = delete;
  GradingSession& operator=(const GradingSession&) = delete;

  // Grades `code` as a design for `problem`; `done` runs once with the verdict, on a sandbox
  // thread or (when no simulation is needed) on the caller's. Thread-safe.
  void Grade(const Problem& problem, std::string code, const SampleRef& ref, Done done)
      EXCLUDES(mu_);
  // Blocks until every grading submitted so far has finished and its callbacks returned.
  void Wait();

  // The verdict key of `code` for `problem` with this session's simulator and limits.
  std::string VerdictKeyFor(const Problem& problem, const std::string& code) const;

  // What the session graded with, for the report.
  std::string simulator_version() const { return tools_.Describe(); }
  std::string_view SimulatorFor(const Problem& problem) const;
  std::string sandbox_layers() const;
  // The settings as they took effect: cross-checks dropped where Yosys cannot run and asked for
  // by default, Yosys's version filled.
  const v1::GradingSettings& settings() const { return settings_; }
  const std::map<std::string, v1::ProblemCalibration>& calibration_records() const {
    return calibrations_.records();
  }
  int calibrations_simulated() const { return calibrations_.simulated(); }
  int simulations() const { return simulations_; }
  int cache_hits() const { return cache_.verdict_hits(); }
  int cross_checks_run() const { return cross_.runs(); }
  int cross_check_hits() const { return cache_.cross_check_hits(); }

 private:
  struct Entry {
    bool done = false;
    Verdict verdict;
    std::vector<Done> waiters;
  };

  GradingSession(const v1::GradingSettings& settings, const GradingResources& resources,
                 const CrossCheckOptions& cross);
  Status Start(const Dataset& dataset, const std::vector<const Problem*>& problems,
               const Calibrations::Given& given);
  Status AddCrossCheckTool();
  Status StartExecutor(const Dataset& dataset);
  const SimulatorTool& ToolFor(const Problem& problem) const;
  // A verdict found without simulating: the cache, or the reference's calibration run.
  std::optional<GradeOutcome> Answer(const Problem& problem, const std::string& code,
                                     const std::string& key);
  // The cross-checks an answered verdict still needs, run in the pool, then Complete.
  void CrossCheckThenComplete(const Problem& problem, std::string code, GradeOutcome answer,
                              Done done);
  // Records the verdict for `key` (caches, counters) and runs the callbacks waiting for it.
  void Complete(const Problem& problem, const std::string& code, GradeOutcome& outcome, Done& owner)
      EXCLUDES(mu_);
  bool Stopped() const { return cancel_ != nullptr && cancel_->stopped(); }

  v1::GradingSettings settings_;
  const CancelToken* cancel_;
  GradingInFlight* guard_;
  RemoteExecutorFactory remote_;
  SandboxPool pool_;
  VerdictCache cache_;
  Toolchain tools_;
  Calibrations calibrations_;
  CrossCheckRunner cross_;
  std::unique_ptr<SimulationExecutor> executor_;
  std::atomic<int> simulations_{0};
  Mutex mu_;
  std::map<std::string, Entry> entries_ GUARDED_BY(mu_);  // by verdict key
};

}  // namespace evald
