#include "evald/runs/grading_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>

#include "base/clock.h"
#include "evald/runs/cross_check_settings.h"
#include "evald/runs/verdict_fields.h"
#include "evald/store/store.h"
#include "harness/calibration.h"
#include "harness/failure_category.h"
#include "harness/testbench_hardening.h"
#include "harness/verdict_key.h"

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

// Runs a tool's version query in the sandbox (the same binary that will grade).
std::string AskToolVersion(SandboxPool& pool, const sandbox::JobRequest& job) {
  std::string version;
  pool.Submit([&](SandboxWorker& w) {
    auto r = w.Run(job, std::chrono::milliseconds(30000));
    if (r.ok() && r->steps_size() > 0) {
      const std::string& out = r->steps(0).output();
      version = out.substr(0, out.find('\n'));
    }
  });
  pool.Wait();
  return version;
}

Status CheckSimulatorAllowed(const SandboxPool& pool, SimulatorKind kind) {
  if (kind == SimulatorKind::kVerilator && !pool.layers().ContainsNativeCode())
    return Status::Unavailable(
        "refusing to run Verilator: it executes code from the design ($system, $c, DPI), and this "
        "sandbox lacks layers needed to contain it (" +
        pool.layers().Describe() + ")");
  return Status::Ok();
}

// The reference run's letter: '.' gradable, 'X' not gradable, '!' the sandbox could not run it.
char CalibrationLetter(const Calibration& c) {
  if (c.gradable) return '.';
  return c.note.find("could not run") != std::string::npos ? '!' : 'X';
}

}  // namespace

Status ValidateExecutor(const ExecutorOptions& options) {
  if (options.executor == "local") return Status::Ok();
  if (options.executor != "slurm")
    return Status::InvalidArgument("unknown executor '" + options.executor + "' (local | slurm)");
  if (options.slurm.spool.empty())
    return Status::InvalidArgument("--executor slurm needs --spool DIR (a shared directory)");
  if (options.slurm.spool.front() != '/')
    return Status::InvalidArgument("--spool must be an absolute path (the workers see it too)");
  return Status::Ok();
}

Status ApplySimulatorChoice(std::string_view name, GradingOptions* options) {
  options->auto_simulator = name == "auto";
  if (options->auto_simulator) {
    options->simulator = SimulatorKind::kIcarus;
    return Status::Ok();
  }
  auto kind = ParseSimulator(name);
  if (!kind.ok()) return Status::InvalidArgument(kind.status().message() + " (or auto)");
  options->simulator = *kind;
  return Status::Ok();
}

GradingSession::GradingSession(const GradingOptions& options)
    : options_(options), pool_(options.sandbox, options.jobs) {}

GradingSession::~GradingSession() {
  pool_.Wait();
}

StatusOr<std::unique_ptr<GradingSession>> GradingSession::Open(
    const GradingOptions& options, const std::vector<const Problem*>& problems) {
  std::unique_ptr<GradingSession> session(new GradingSession(options));
  EVALD_RETURN_IF_ERROR(session->Start(problems));
  return session;
}

Status GradingSession::AddSimulator(SimulatorKind kind) {
  EVALD_RETURN_IF_ERROR(CheckSimulatorAllowed(pool_, kind));
  Simulator s{kind, AskToolVersion(pool_, BuildVersionJob(kind)), DefaultLimits(kind),
              DefaultLimits(kind)};
  if (s.version.empty())
    return Status::Unavailable(std::string(SimulatorName(kind)) +
                               " is not installed or does not run in the sandbox");
  if (options_.simulate_timeout_ms)
    s.key_limits.simulate_timeout_ms = *options_.simulate_timeout_ms;
  // Calibration always runs the reference to its end (base); samples may stop early.
  s.key_limits.stop_at_first_mismatch = !options_.exact_mismatch_counts;
  simulators_.push_back(std::move(s));
  return Status::Ok();
}

Status GradingSession::Start(const std::vector<const Problem*>& problems) {
  EVALD_RETURN_IF_ERROR(pool_.Start().Annotate("starting the sandbox"));
  spdlog::info("sandbox layers: {}", pool_.layers().Describe());
  EVALD_RETURN_IF_ERROR(AddSimulator(options_.simulator));
  if (options_.cross.any()) {
    yosys_version_ = AskToolVersion(pool_, BuildYosysVersionJob());
    if (yosys_version_.empty() && options_.cross.required)
      return Status::Unavailable(
          "formal and synthesis checks need yosys, which is not installed or does not run in the "
          "sandbox (--formal off to grade without them)");
    if (yosys_version_.empty()) {
      spdlog::warn("yosys does not run in the sandbox: grading without formal checks");
      options_.cross = CrossCheckOptions{};
    }
  }
  EVALD_RETURN_IF_ERROR(ValidateExecutor(options_.executor));
  std::vector<const Problem*> failing = Calibrate(problems, 0);
  if (!options_.auto_simulator || failing.empty()) return StartExecutor();
  // auto: the problems whose reference fails with the primary simulator, tried with the other.
  const SimulatorKind other = options_.simulator == SimulatorKind::kIcarus
                                  ? SimulatorKind::kVerilator
                                  : SimulatorKind::kIcarus;
  if (Status st = AddSimulator(other); !st.ok()) {
    spdlog::warn("--simulator auto: {}; {} problem(s) stay ungradable", st.ToString(),
                 failing.size());
    return Status::Ok();
  }
  const std::map<std::string, Calibration> primary = calibration_;
  const std::map<std::string, v1::ProblemCalibration> primary_records = records_;
  const std::vector<const Problem*> still = Calibrate(failing, 1);
  for (const Problem* p : failing) {
    if (std::find(still.begin(), still.end(), p) != still.end()) continue;
    v1::ProblemCalibration& r = records_[p->name];
    r.set_note("graded with " + std::string(SimulatorName(other)) + ": the reference fails under " +
               std::string(SimulatorName(options_.simulator)) + " (" +
               primary_records.at(p->name).note() + ")" +
               (r.note().empty() ? "" : "; " + r.note()));
  }
  for (const Problem* p : still) {  // ungradable with both: keep the primary's story
    calibration_[p->name] = primary.at(p->name);
    records_[p->name] = primary_records.at(p->name);
    reference_runs_.erase(p->name);
    graded_with_.erase(p->name);
  }
  return StartExecutor();
}

Status GradingSession::StartExecutor() {
  if (!options_.executor.remote()) return Status::Ok();
  v1::WorkerSpec spec;
  spec.set_dataset_folder(options_.executor.dataset_folder);
  spec.set_task(options_.executor.task);
  spec.set_simulator(options_.auto_simulator ? "auto"
                                             : std::string(SimulatorName(options_.simulator)));
  spec.set_exact_mismatch_counts(options_.exact_mismatch_counts);
  spec.set_simulate_timeout_ms(options_.simulate_timeout_ms.value_or(0));
  *spec.mutable_cross_checks() = CrossCheckSettingsOf(options_.cross);
  spec.set_simulator_version(simulator_version());
  spec.set_yosys_version(yosys_version_);
  spec.set_require_full_isolation(options_.sandbox.require_full_isolation);
  for (const auto& [name, record] : records_) *spec.add_calibrations() = record;
  dispatcher_ = std::make_unique<SlurmDispatcher>(options_.executor.slurm, std::move(spec),
                                                  options_.abort, options_.cancel);
  return dispatcher_->Start();
}

const GradingSession::Simulator& GradingSession::SimulatorOf(const std::string& problem) const {
  auto it = graded_with_.find(problem);
  return simulators_[it == graded_with_.end() ? 0 : it->second];
}

std::string_view GradingSession::SimulatorFor(const Problem& problem) const {
  return SimulatorName(SimulatorOf(problem.name).kind);
}

std::string GradingSession::simulator_version() const {
  if (simulators_.size() == 1) return simulators_[0].version;
  std::string out;
  for (const auto& s : simulators_)
    out += (out.empty() ? "" : "; ") + std::string(SimulatorName(s.kind)) + " " + s.version;
  return out;
}

std::vector<const Problem*> GradingSession::Calibrate(const std::vector<const Problem*>& problems,
                                                      size_t index) {
  const Simulator& sim = simulators_[index];
  std::mutex mu;
  for (const Problem* p : problems) {
    if (auto given = options_.given_calibrations.find(p->name);
        given != options_.given_calibrations.end()) {
      v1::ProblemCalibration record = given->second;
      // --simulator auto: a problem the submitter graded with the other simulator fails here.
      if (record.simulator() != SimulatorName(sim.kind)) record.set_reference_verdict("X");
      calibration_[p->name] = CalibrationFromProto(record);
      records_[p->name] = std::move(record);
      continue;
    }
    const std::string key = CalibrationKey(sim.kind, sim.version, sim.base, *p);
    v1::ProblemCalibration cached;
    if (options_.store && options_.store->Get(Family::kCalibrations, key, &cached).ok()) {
      calibration_[p->name] = CalibrationFromProto(cached);
      records_[p->name] = cached;
      reference_runs_.erase(p->name);
      continue;
    }
    ++calibrations_simulated_;
    pool_.Submit([this, &mu, &sim, p, key](SandboxWorker& w) {
      DesignRun run;
      Calibration c = CalibrateProblem(w, sim.kind, sim.base, *p, &run);
      v1::ProblemCalibration record = CalibrationProto(p->name, c, CalibrationLetter(c));
      if (options_.store && record.reference_verdict() != "!")
        (void)options_.store->Put(Family::kCalibrations, key, record);
      std::lock_guard<std::mutex> lock(mu);
      calibration_[p->name] = c;
      records_[p->name] = std::move(record);
      reference_runs_[p->name] = std::move(run);
    });
  }
  pool_.Wait();
  std::vector<const Problem*> failing;
  for (const Problem* p : problems) {
    v1::ProblemCalibration& record = records_[p->name];
    if (record.reference_verdict().empty()) record.set_reference_verdict(".");
    record.set_simulate_limit_s(SimulateCpuSeconds(
        LimitsForProblem(sim.base, calibration_[p->name], options_.simulate_timeout_ms)));
    record.set_simulator(std::string(SimulatorName(sim.kind)));
    if (index > 0) graded_with_[p->name] = index;
    if (record.reference_verdict() == "X") failing.push_back(p);
  }
  return failing;
}

std::optional<GradeOutcome> GradingSession::Answer(const Problem& problem, const std::string& code,
                                                   const std::string& key) {
  if (options_.store) {
    if (auto hit = options_.store->LookupVerdict(key)) {
      ++cache_hits_;
      GradeOutcome out;
      out.verdict = FromVerdictFields(*hit);
      out.source = VerdictSource::kCache;
      return out;
    }
  }
  auto ref_run = reference_runs_.find(problem.name);
  if (ref_run != reference_runs_.end() && code == ReferenceAsDesign(problem.reference)) {
    GradeOutcome out;
    out.verdict = ClassifyRun(ref_run->second, SimulatorOf(problem.name).kind, code,
                              &calibration_.at(problem.name));
    out.source = VerdictSource::kReference;
    out.fault = out.verdict.category == category::kInternalError;
    return out;
  }
  return std::nullopt;
}

void GradingSession::StoreVerdict(const GradeOutcome& outcome) {
  if (options_.store && !outcome.key.empty() && outcome.verdict.cacheable &&
      outcome.verdict.category != category::kInternalError)
    (void)options_.store->StoreVerdict(outcome.key, VerdictFields(outcome.verdict));
}

void GradingSession::Grade(const Problem& problem, std::string code, const SampleRef& ref,
                           Done done) {
  if (!calibration_.count(problem.name)) {
    GradeOutcome out;
    out.verdict.detail = "internal: problem " + problem.name + " was not calibrated";
    out.verdict.cacheable = false;
    out.fault = true;
    return done(out);
  }
  std::string key = VerdictKeyFor(problem, code);
  std::optional<Verdict> earlier;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = entries_.try_emplace(key);
    if (!inserted && !it->second.done) {
      it->second.waiters.push_back(std::move(done));
      return;
    }
    if (!inserted) earlier = it->second.verdict;
  }
  if (earlier) {
    GradeOutcome out;
    out.verdict = std::move(*earlier);
    out.source = VerdictSource::kDuplicate;
    out.key = std::move(key);
    return done(out);
  }
  if (auto answer = Answer(problem, code, key)) {
    answer->key = key;
    StoreVerdict(*answer);
    const bool wants = WantsFormal(answer->verdict) || WantsSynthesis(answer->verdict);
    if (!wants || answer->fault || AttachCachedCrossCheck(problem, code, &answer->verdict))
      return Complete(key, *answer, done);
    // The verdict is known, its cross-checks are not: they run in the pool.
    auto out = std::make_shared<GradeOutcome>(std::move(*answer));
    pool_.Submit([this, &problem, code = std::move(code), key = std::move(key), out,
                  done = std::move(done)](SandboxWorker& w) mutable {
      if (options_.abort != nullptr && options_.abort->load()) {
        std::lock_guard<std::mutex> lock(mu_);
        entries_.erase(key);  // skipped, as a simulation not yet started is
        return;
      }
      CrossCheckOn(w, problem, code, "", &out->verdict);
      Complete(key, *out, done);
    });
    return;
  }
  if (dispatcher_) return Dispatch(problem, code, key, std::move(done));
  pool_.Submit([this, &problem, code = std::move(code), ref, key = std::move(key),
                done = std::move(done)](SandboxWorker& worker) mutable {
    if (options_.abort != nullptr && options_.abort->load()) {
      std::lock_guard<std::mutex> lock(mu_);
      entries_.erase(key);  // skipped: neither it nor its waiters get a verdict
      return;
    }
    GradeOutcome out;
    out.key = key;
    Simulate(worker, problem, code, ref, &out);
    Complete(key, out, done);
  });
}

std::string GradingSession::VerdictKeyFor(const Problem& problem, const std::string& code) const {
  const Simulator& sim = SimulatorOf(problem.name);
  return VerdictKey(sim.kind, sim.version, sim.key_limits, problem, code);
}

void GradingSession::Dispatch(const Problem& problem, const std::string& code,
                              const std::string& key, Done done) {
  v1::WorkerJob job;
  job.set_key(key);
  job.set_problem(problem.name);
  job.set_code(code);
  dispatcher_->Submit(std::move(job), [this, &problem, code, key, done = std::move(done)](
                                          StatusOr<v1::WorkerResult> result) mutable {
    GradeOutcome out = FromWorker(problem, code, key, std::move(result));
    Complete(key, out, done);
  });
}

GradeOutcome GradingSession::FromWorker(const Problem& problem, const std::string& code,
                                        const std::string& key, StatusOr<v1::WorkerResult> result) {
  GradeOutcome out;
  out.key = key;
  if (!result.ok() || result->fault()) {
    // No verdict on the code: the sample stays ungraded (a resumed run tries it again).
    out.verdict.category = category::kInternalError;
    out.verdict.detail = result.ok() ? result->verdict().detail() : result.status().message();
    out.verdict.cacheable = false;
    out.fault = true;
    return out;
  }
  out.verdict = FromVerdictFields(result->verdict());
  out.verdict.cacheable = result->cacheable();
  out.seconds = result->seconds();
  ++simulations_;
  StoreVerdict(out);
  if (result->cross_checked()) {
    out.verdict.cross = CrossCheckFromRecord(result->cross());
    out.verdict.cross.formal.cacheable = result->cross_cacheable();
    out.verdict.cross_checked = true;
    ++cross_checks_;
    StoreCrossCheck(problem, code, out.verdict);
  }
  return out;
}

void GradingSession::Simulate(SandboxWorker& worker, const Problem& problem,
                              const std::string& code, const SampleRef& ref, GradeOutcome* out) {
  if (options_.guard != nullptr) {
    std::string why;
    out->attempt.emplace(
        options_.guard->Begin(out->key, ref.run_id, problem.name, ref.index, &why));
    if (!out->attempt->allowed()) {
      out->verdict.category = category::kInternalError;  // '!' for good, never cached
      out->verdict.detail = why;
      out->verdict.cacheable = false;
      out->source = VerdictSource::kRefused;
      out->attempt.reset();
      spdlog::error("run {}: {} #{}: {}", ref.run_id, problem.name, ref.index, why);
      return;
    }
  }
  const Calibration& cal = calibration_.at(problem.name);
  auto t0 = std::chrono::steady_clock::now();
  MaybeInjectCrash(code);
  const Simulator& sim = SimulatorOf(problem.name);
  // key_limits: the base limits with the session's fixed timeout and early-stop choice.
  const SimulatorLimits limits =
      LimitsForProblem(sim.key_limits, cal, options_.simulate_timeout_ms);
  DesignRun run = RunDesign(worker, sim.kind, limits, problem, code);
  out->verdict = ClassifyRun(run, sim.kind, code, &cal);
  out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out->source = VerdictSource::kSimulated;
  ++simulations_;
  if (out->verdict.category == category::kInternalError) {
    out->fault = true;
    // The process survived a sandbox fault: no death to count against this code.
    if (options_.guard != nullptr) options_.guard->Abandon(out->key);
    out->attempt.reset();
    return;
  }
  StoreVerdict(*out);
  if ((WantsFormal(out->verdict) || WantsSynthesis(out->verdict)) &&
      !AttachCachedCrossCheck(problem, code, &out->verdict))
    CrossCheckOn(worker, problem, code, std::move(run.compiled), &out->verdict);
}

bool GradingSession::WantsFormal(const Verdict& v) const {
  if (!options_.cross.formal) return false;
  if (v.passed) return true;
  // Failures that compiled and ran: could the testbench be wrong about them?
  return options_.cross.formal_failures &&
         (v.category == category::kRuntimeMismatch || v.category == category::kResetMismatch ||
          v.category == category::kTimeout);
}

bool GradingSession::WantsSynthesis(const Verdict& v) const {
  return options_.cross.synthesis && v.passed;
}

std::string GradingSession::CrossCheckKeyFor(const Problem& problem, const std::string& code,
                                             const Verdict& v) const {
  return CrossCheckKey(yosys_version_, SimulatorOf(problem.name).version, options_.cross,
                       WantsFormal(v), WantsSynthesis(v), problem, code);
}

bool GradingSession::AttachCachedCrossCheck(const Problem& problem, const std::string& code,
                                            Verdict* v) {
  if (options_.store == nullptr) return false;
  v1::CachedCrossCheck record;
  if (!options_.store->Get(Family::kCrossChecks, CrossCheckKeyFor(problem, code, *v), &record).ok())
    return false;
  v->cross = CrossCheckFromRecord(record);
  v->cross_checked = true;
  ++cross_check_hits_;
  return true;
}

void GradingSession::CrossCheckOn(SandboxWorker& worker, const Problem& problem,
                                  const std::string& code, std::string compiled, Verdict* v) {
  const Simulator& sim = SimulatorOf(problem.name);
  v->cross_checked = true;
  if (code == ReferenceAsDesign(problem.reference)) {
    // The reference's own text: equivalent by construction, its figures the reference's.
    if (WantsFormal(*v)) {
      v->cross.formal.outcome = FormalOutcome::kProven;
      v->cross.formal.mode = "identical";
      v->cross.formal.detail = "the design is the reference's text";
    }
    if (WantsSynthesis(*v))
      v->cross.synthesis = v->cross.reference_synthesis = ReferenceSynthesis(worker, problem);
    return;
  }
  if (compiled.empty()) {
    auto text = CheckedDesignText(worker, sim.kind, sim.base, code);
    if (!text.ok()) {
      v->cross.formal.outcome = FormalOutcome::kUnknown;
      v->cross.formal.detail = "the design could not be prepared: " + text.status().message();
      v->cross.formal.cacheable = false;
      return;
    }
    compiled = std::move(*text);
  }
  if (WantsFormal(*v)) v->cross.formal = CheckFormally(worker, problem, compiled);
  if (WantsSynthesis(*v)) {
    v->cross.synthesis = Synthesize(worker, compiled, options_.cross.synthesis_cpu_seconds);
    v->cross.reference_synthesis = ReferenceSynthesis(worker, problem);
  }
  ++cross_checks_;
  StoreCrossCheck(problem, code, *v);
}

void GradingSession::StoreCrossCheck(const Problem& problem, const std::string& code,
                                     const Verdict& v) {
  if (options_.store == nullptr || !v.cross.cacheable()) return;
  v1::CachedCrossCheck record = CrossCheckRecord(v.cross);
  record.set_created_unix_ms(UnixMillis());
  (void)options_.store->Put(Family::kCrossChecks, CrossCheckKeyFor(problem, code, v), record);
}

FormalVerdict GradingSession::CheckFormally(SandboxWorker& worker, const Problem& problem,
                                            const std::string& compiled) {
  {
    std::lock_guard<std::mutex> lock(synthesis_mu_);
    const int spent = formal_out_of_budget_[problem.name];
    if (spent >= options_.cross.give_up_after) {
      FormalVerdict v;
      v.outcome = FormalOutcome::kUnknown;
      v.detail = "not tried: " + std::to_string(spent) +
                 " checks of this problem ran out of their budget in this run";
      v.cacheable = false;
      return v;
    }
  }
  FormalVerdict v = CheckEquivalence(worker, problem, compiled, options_.cross.formal_options,
                                     DefaultLimits(SimulatorKind::kIcarus));
  if (v.out_of_budget) {
    std::lock_guard<std::mutex> lock(synthesis_mu_);
    ++formal_out_of_budget_[problem.name];
  }
  return v;
}

const SynthStats& GradingSession::ReferenceSynthesis(SandboxWorker& worker,
                                                     const Problem& problem) {
  {
    std::lock_guard<std::mutex> lock(synthesis_mu_);
    auto it = reference_synthesis_.find(problem.name);
    if (it != reference_synthesis_.end()) return it->second;
  }
  SynthStats s = Synthesize(worker, ReferenceAsDesign(problem.reference),
                            options_.cross.synthesis_cpu_seconds);
  std::lock_guard<std::mutex> lock(synthesis_mu_);
  return reference_synthesis_.emplace(problem.name, std::move(s)).first->second;
}

void GradingSession::Complete(const std::string& key, GradeOutcome& outcome, Done& owner) {
  std::vector<Done> waiters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Entry& entry = entries_[key];
    waiters = std::move(entry.waiters);
    // A sandbox fault is no verdict on the code: a later submission simulates it again.
    if (outcome.fault) {
      entries_.erase(key);
    } else {
      entry.done = true;
      entry.verdict = outcome.verdict;
    }
  }
  owner(outcome);
  for (Done& waiter : waiters) {
    GradeOutcome copy;
    copy.verdict = outcome.verdict;
    copy.source = VerdictSource::kDuplicate;
    copy.key = key;
    copy.fault = outcome.fault;
    waiter(copy);
  }
}

void GradingSession::Wait() {
  pool_.Wait();
  if (dispatcher_) {
    dispatcher_->Drain();
    pool_.Wait();
  }
}

}  // namespace evald
