#include "evald/runs/local_executor.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <csignal>
#include <cstdlib>

#include "harness/calibration.h"
#include "harness/failure_category.h"

namespace evald {

namespace {

// Fault injection for the crash-loop tests (tests/daemon_test.cc): with EVALD_FAULT_CRASH_ON_CODE
// set, grading a code that contains its value kills the process at once (SIGKILL: no core
// file, no cleanup), as a crash inside a tool's parser would.
void MaybeInjectCrash(const std::string& code) {
  static const char* needle = std::getenv("EVALD_FAULT_CRASH_ON_CODE");
  if (needle != nullptr && *needle != '\0' && code.find(needle) != std::string::npos)
    ::raise(SIGKILL);
}

}  // namespace

void LocalExecutor::Submit(SimulationJob job, Done done) {
  pool_.Submit([this, job = std::move(job), done = std::move(done)](SandboxWorker& w) {
    if (cancel_ != nullptr && cancel_->stopped()) return;  // dropped, as the contract says
    GradeOutcome out;
    out.key = job.key;
    Simulate(w, job, &out);
    done(out);
  });
}

bool LocalExecutor::Admitted(const SimulationJob& job, GradeOutcome* out) {
  if (guard_ == nullptr) return true;
  std::string why;
  out->attempt.emplace(
      guard_->Begin(job.key, job.ref.run_id, job.problem->name, job.ref.index, &why));
  if (out->attempt->allowed()) return true;
  out->verdict.category = category::kInternalError;  // '!' for good, never cached
  out->verdict.detail = why;
  out->verdict.cacheable = false;
  out->source = VerdictSource::kRefused;
  out->attempt.reset();
  spdlog::error("run {}: {} #{}: {}", job.ref.run_id, job.problem->name, job.ref.index, why);
  return false;
}

void LocalExecutor::Simulate(SandboxWorker& worker, const SimulationJob& job, GradeOutcome* out) {
  if (!Admitted(job, out)) return;
  const Problem& problem = *job.problem;
  const Calibration& cal = calibrations_.Of(problem.name);
  const SimulatorTool& sim = tools_.simulator(calibrations_.SimulatorOf(problem.name));
  auto t0 = std::chrono::steady_clock::now();
  MaybeInjectCrash(job.code);
  // key_limits: the base limits with the session's fixed timeout and early-stop choice.
  const SimulatorLimits limits = LimitsForProblem(sim.key_limits, cal, sim.fixed_timeout_ms);
  GradedRun graded = RunAndClassify(worker, sim.kind, limits, problem, job.code, &cal);
  if (graded.wall_clock_retries > 0)
    spdlog::warn(
        "{}: the wall-clock backstop ended {} attempt(s) (the machine's load, not the "
        "design); {}",
        problem.name, graded.wall_clock_retries,
        graded.verdict.category == category::kInternalError ? "not graded" : "graded on the next");
  DesignRun& run = graded.run;
  out->verdict = std::move(graded.verdict);
  out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out->source = VerdictSource::kSimulated;
  if (out->verdict.category == category::kInternalError) {
    out->fault = true;
    // The process survived a sandbox fault: no death to count against this code.
    if (guard_ != nullptr) guard_->Abandon(out->key);
    out->attempt.reset();
    return;
  }
  if (cross_.Wanted(out->verdict) && !cross_.AttachCached(problem, job.code, sim, &out->verdict))
    cross_.Run(worker, problem, job.code, sim, std::move(run.compiled), &out->verdict);
}

}  // namespace evald
