// The grading stage of the one run pipeline, shared by `evald eval`, `evald run` and the daemon.
// Opening a session starts the sandboxes, checks that the simulator may run in them, asks its
// version and calibrates the run's problems (from the cache where it can). Grade() then gives
// each (problem, code) one simulation per session however often and however concurrently it is
// submitted: a code already simulated or under way is answered from that simulation, a code in
// the verdict cache from the cache, the reference itself from its calibration run.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "datasets/dataset.h"
#include "evald/proto/eval.pb.h"
#include "evald/runs/grading_in_flight.h"
#include "evald/runs/sandbox_pool.h"
#include "evald/runs/slurm_dispatch.h"
#include "harness/grader.h"
#include "harness/simulator.h"

namespace evald {

class Store;

// Where the simulations that no cache answers run: this process's sandboxes ("local"), or a
// Slurm job array of `evald worker` tasks over a shared spool ("slurm"; docs/scale-out.md).
// Calibration, cache lookups and cross-checks of cached verdicts stay local either way.
struct ExecutorOptions {
  std::string executor = "local";  // "local" | "slurm"
  SlurmDispatchOptions slurm;
  // What the workers load (the same path on every node); set by the pipeline, not the user.
  std::string dataset_folder;
  std::string task;
  bool remote() const { return executor == "slurm"; }
};

// "local" | "slurm": refuses anything else, and slurm without a spool.
Status ValidateExecutor(const ExecutorOptions& options);

struct GradingOptions {
  SimulatorKind simulator = SimulatorKind::kIcarus;
  // --simulator auto: each problem graded with `simulator` (Icarus) where its reference passes
  // there, else with Verilator where the reference passes there (recorded per problem and per
  // sample). Verilator is used only when the sandbox can contain it.
  bool auto_simulator = false;
  int jobs = 2;
  SandboxOptions sandbox;
  std::optional<uint32_t> simulate_timeout_ms;  // fixed limit instead of the calibrated one
  // Run wrong designs to the end (exact mismatch counts) instead of to their first mismatch.
  bool exact_mismatch_counts = false;
  // Formal equivalence and synthesis beside simulation (off unless asked for).
  CrossCheckOptions cross;
  Store* store = nullptr;            // verdict, calibration and cross-check cache (optional)
  GradingInFlight* guard = nullptr;  // the daemon's crash-loop guard (optional)
  // Once set, simulations not yet started are skipped (their callbacks never run).
  const std::atomic<bool>* abort = nullptr;
  // Set with abort when the run is cancelled (not only the process stopping): work sent to a
  // cluster is cancelled there too; otherwise a restarted daemon picks it up.
  const std::atomic<bool>* cancel = nullptr;
  ExecutorOptions executor;
  // Calibrations made elsewhere (an `evald worker` grading with its submitter's): used instead
  // of calibrating, for the problems named.
  std::map<std::string, v1::ProblemCalibration> given_calibrations;
};

// "iverilog" | "verilator" | "auto" into the options (auto: Icarus first, Verilator for the
// problems whose reference only Verilator runs correctly).
Status ApplySimulatorChoice(std::string_view name, GradingOptions* options);

// Where a verdict came from.
enum class VerdictSource {
  kSimulated,  // this session simulated it
  kReference,  // the code is the reference: classified from the calibration run
  kCache,      // the verdict cache
  kDuplicate,  // the same (problem, code) was graded earlier in this session
  kRefused,    // the crash-loop guard refused to simulate it again ('!', kept for good)
};

struct GradeOutcome {
  Verdict verdict;
  VerdictSource source = VerdictSource::kSimulated;
  std::string key;     // the verdict key (the cache address)
  double seconds = 0;  // wall time of the simulation (kSimulated)
  // '!' from a fault of the sandbox or of evald, not a verdict on the code: a daemon leaves
  // the sample ungraded, to be tried again when the run resumes.
  bool fault = false;
  // Held while the caller records the verdict: the guard's record must leave in the same
  // batch (GradingInFlight::Finish).
  std::optional<GradingInFlight::Attempt> attempt;
};

// Which sample a grading is for (the guard's records name it).
struct SampleRef {
  std::string run_id;
  int index = 0;
};

class GradingSession {
 public:
  using Done = std::function<void(GradeOutcome&)>;

  static StatusOr<std::unique_ptr<GradingSession>> Open(
      const GradingOptions& options, const std::vector<const Problem*>& problems);
  ~GradingSession();

  // "iverilog VERSION" or, with auto, every simulator in use: "iverilog ...; verilator ...".
  std::string simulator_version() const;
  // The simulator grading `problem` ("iverilog" | "verilator").
  std::string_view SimulatorFor(const Problem& problem) const;
  std::string sandbox_layers() const { return pool_.layers().Describe(); }
  int calibrations_simulated() const { return calibrations_simulated_; }
  // The calibration of every problem given to Open, with its simulation limit, by name.
  const std::map<std::string, v1::ProblemCalibration>& calibration_records() const {
    return records_;
  }

  // Grades `code` as a design for `problem`; `done` runs once with the verdict, on a sandbox
  // thread or (when no simulation is needed) on the caller's. Thread-safe.
  void Grade(const Problem& problem, std::string code, const SampleRef& ref, Done done);
  // Blocks until every simulation submitted so far has finished and its callbacks returned.
  void Wait();

  // The verdict key of `code` for `problem` with this session's simulator and limits.
  std::string VerdictKeyFor(const Problem& problem, const std::string& code) const;
  // Counters of the cluster executor (null when grading locally).
  const DispatchCounters* dispatch_counters() const {
    return dispatcher_ ? &dispatcher_->counters() : nullptr;
  }

  int simulations() const { return simulations_; }
  int cache_hits() const { return cache_hits_; }
  // Yosys's version when cross-checks are on; the cross-checks run and answered by the cache.
  const std::string& yosys_version() const { return yosys_version_; }
  // The cross-checks in effect (the default ones are dropped where Yosys cannot run).
  const CrossCheckOptions& cross_checks() const { return options_.cross; }
  int cross_checks_run() const { return cross_checks_; }
  int cross_check_hits() const { return cross_check_hits_; }

 private:
  struct Entry {
    bool done = false;
    Verdict verdict;
    std::vector<Done> waiters;
  };

  // One simulator the session grades with: its version and limits.
  struct Simulator {
    SimulatorKind kind;
    std::string version;
    SimulatorLimits base, key_limits;  // key_limits: what verdict keys are made from
  };

  explicit GradingSession(const GradingOptions& options);
  Status Start(const std::vector<const Problem*>& problems);
  Status AddSimulator(SimulatorKind kind);
  const Simulator& SimulatorOf(const std::string& problem) const;
  // Calibrates `problems` with simulator `s`; returns those whose reference fails there.
  std::vector<const Problem*> Calibrate(const std::vector<const Problem*>& problems, size_t s);
  // A verdict found without simulating: the cache, or the reference's calibration run.
  std::optional<GradeOutcome> Answer(const Problem& problem, const std::string& code,
                                     const std::string& key);
  void Simulate(SandboxWorker& worker, const Problem& problem, const std::string& code,
                const SampleRef& ref, GradeOutcome* out);
  // Cross-checks (formal, synthesis) for a verdict that asks for them: from the cache, else run
  // on `worker` over `compiled` (the text that was compiled; empty: prepare it again).
  bool WantsFormal(const Verdict& v) const;
  bool WantsSynthesis(const Verdict& v) const;
  std::string CrossCheckKeyFor(const Problem& problem, const std::string& code,
                               const Verdict& v) const;
  bool AttachCachedCrossCheck(const Problem& problem, const std::string& code, Verdict* v);
  void CrossCheckOn(SandboxWorker& worker, const Problem& problem, const std::string& code,
                    std::string compiled, Verdict* v);
  // Into the cross-check cache, when the result may be cached.
  void StoreCrossCheck(const Problem& problem, const std::string& code, const Verdict& v);
  const SynthStats& ReferenceSynthesis(SandboxWorker& worker, const Problem& problem);
  // The formal check, unless this problem's checks keep running out of their budget.
  FormalVerdict CheckFormally(SandboxWorker& worker, const Problem& problem,
                              const std::string& compiled);
  Status StartExecutor();
  // A simulation sent to the cluster; `done` runs with its result.
  void Dispatch(const Problem& problem, const std::string& code, const std::string& key, Done done);
  GradeOutcome FromWorker(const Problem& problem, const std::string& code, const std::string& key,
                          StatusOr<v1::WorkerResult> result);
  // Records the verdict for `key` and runs the callbacks waiting for it.
  void Complete(const std::string& key, GradeOutcome& outcome, Done& owner);
  void StoreVerdict(const GradeOutcome& outcome);

  GradingOptions options_;
  SandboxPool pool_;
  std::vector<Simulator> simulators_;          // [0] the primary
  std::map<std::string, size_t> graded_with_;  // problem -> simulator index (absent: 0)
  std::map<std::string, Calibration> calibration_;
  std::map<std::string, DesignRun> reference_runs_;  // fresh calibrations only
  std::map<std::string, v1::ProblemCalibration> records_;
  int calibrations_simulated_ = 0;
  std::mutex mu_;
  std::map<std::string, Entry> entries_;  // by verdict key
  std::atomic<int> simulations_{0}, cache_hits_{0};
  std::string yosys_version_;
  std::atomic<int> cross_checks_{0}, cross_check_hits_{0};
  std::mutex synthesis_mu_;  // reference_synthesis_, formal_out_of_budget_
  std::map<std::string, SynthStats> reference_synthesis_;  // by problem name
  std::map<std::string, int> formal_out_of_budget_;        // by problem name (synthesis_mu_)
  std::unique_ptr<SlurmDispatcher> dispatcher_;            // executor slurm
};

}  // namespace evald
