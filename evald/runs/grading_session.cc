#include "evald/runs/grading_session.h"

#include <spdlog/spdlog.h>

#include "evald/runs/grading_settings.h"
#include "evald/runs/local_executor.h"
#include "harness/failure_category.h"
#include "harness/grader.h"
#include "harness/testbench_hardening.h"
#include "harness/verdict_key.h"

namespace evald {

GradeOutcome FaultOutcome(const std::string& key, const std::string& why) {
  GradeOutcome out;
  out.key = key;
  out.verdict.category = category::kInternalError;
  out.verdict.detail = why;
  out.verdict.cacheable = false;
  out.fault = true;
  return out;
}

namespace {

SandboxOptions SandboxFor(const v1::GradingSettings& settings, SandboxOptions sandbox) {
  sandbox.require_full_isolation |= settings.require_full_isolation();
  return sandbox;
}

}  // namespace

GradingSession::GradingSession(const v1::GradingSettings& settings,
                               const GradingResources& resources, const CrossCheckOptions& cross)
    : settings_(settings),
      cancel_(resources.cancel),
      guard_(resources.guard),
      remote_(resources.remote),
      pool_(SandboxFor(settings, resources.sandbox), resources.jobs, resources.cancel),
      cache_(resources.store),
      tools_(pool_, resources.store),
      calibrations_(pool_, cache_, FixedSimulateTimeout(settings), resources.cancel,
                    resources.progress),
      cross_(cross, cache_) {}

GradingSession::~GradingSession() {
  if (executor_) executor_->Drain();
  pool_.Wait();
}

StatusOr<std::unique_ptr<GradingSession>> GradingSession::Open(
    const v1::GradingSettings& settings, const GradingResources& resources, const Dataset& dataset,
    const std::vector<const Problem*>& problems, const Calibrations::Given& given) {
  CrossCheckOptions cross = CrossCheckOptionsFromProto(settings.cross_checks());
  std::unique_ptr<GradingSession> session(new GradingSession(settings, resources, cross));
  EVALD_RETURN_IF_ERROR(session->Start(dataset, problems, given));
  return session;
}

Status GradingSession::AddCrossCheckTool() {
  if (!cross_.options().any()) return Status::Ok();
  const std::string yosys = tools_.YosysVersion();
  if (yosys.empty() && cross_.options().required)
    return Status::Unavailable(
        "formal and synthesis checks need yosys, which is not installed or does not run in the "
        "sandbox (--formal off to grade without them)");
  if (yosys.empty()) {
    spdlog::warn("yosys does not run in the sandbox: grading without formal checks");
    cross_.DisableAll();
  }
  cross_.set_yosys_version(yosys);
  return Status::Ok();
}

Status GradingSession::Start(const Dataset& dataset, const std::vector<const Problem*>& problems,
                             const Calibrations::Given& given) {
  auto choice = SimulatorChoiceFromProto(settings_);
  if (!choice.ok()) return choice.status();
  const auto fixed = FixedSimulateTimeout(settings_);
  EVALD_RETURN_IF_ERROR(
      tools_.AddSimulator(choice->primary, fixed, settings_.exact_mismatch_counts()));
  EVALD_RETURN_IF_ERROR(AddCrossCheckTool());
  const std::vector<const Problem*> failing = calibrations_.Calibrate(tools_, 0, problems, given);
  if (choice->automatic && !failing.empty()) {
    // auto: the problems whose reference fails with Icarus, tried with Verilator.
    if (Status st = tools_.AddSimulator(SimulatorKind::kVerilator, fixed,
                                        settings_.exact_mismatch_counts());
        !st.ok()) {
      spdlog::warn("--simulator auto: {}; {} problem(s) stay ungradable", st.ToString(),
                   failing.size());
    } else {
      calibrations_.FallBack(tools_, failing, given);
    }
  }
  if (calibrations_.stopped()) return Status::Cancelled("stopped while calibrating");
  if (pool_.started()) {
    spdlog::info("sandbox layers: {}", pool_.layers().Describe());
    for (const SimulatorTool& s : tools_.simulators())
      if (s.kind == SimulatorKind::kVerilator && !pool_.layers().ContainsNativeCode())
        return Status::Unavailable(
            "refusing to run Verilator: it executes code from the design ($system, $c, DPI), and "
            "this sandbox lacks layers needed to contain it (" +
            pool_.layers().Describe() + ")");
  }
  *settings_.mutable_cross_checks() = CrossCheckOptionsToProto(cross_.options());
  settings_.mutable_cross_checks()->set_yosys_version(cross_.yosys_version());
  return StartExecutor(dataset);
}

Status GradingSession::StartExecutor(const Dataset& dataset) {
  if (!remote_) {
    executor_ =
        std::make_unique<LocalExecutor>(pool_, tools_, calibrations_, cross_, guard_, cancel_);
    return Status::Ok();
  }
  RemoteExecutorContext context;
  context.cancel = cancel_;
  v1::WorkerSpec& spec = context.spec;
  spec.set_dataset_folder(dataset.folder());
  spec.set_task(std::string(TaskName(dataset.task())));
  *spec.mutable_grading() = settings_;
  spec.set_simulator_version(simulator_version());
  spec.set_yosys_version(cross_.yosys_version());
  for (const auto& [name, record] : calibrations_.records()) *spec.add_calibrations() = record;
  auto executor = remote_(std::move(context));
  if (!executor.ok()) return executor.status();
  executor_ = std::move(*executor);
  return Status::Ok();
}

const SimulatorTool& GradingSession::ToolFor(const Problem& problem) const {
  return tools_.simulator(calibrations_.SimulatorOf(problem.name));
}

std::string_view GradingSession::SimulatorFor(const Problem& problem) const {
  return SimulatorName(ToolFor(problem).kind);
}

std::string GradingSession::sandbox_layers() const {
  return pool_.started() ? pool_.layers().Describe()
                         : "none started (every result came from the caches)";
}

std::string GradingSession::VerdictKeyFor(const Problem& problem, const std::string& code) const {
  const SimulatorTool& sim = ToolFor(problem);
  return VerdictKey(sim.kind, sim.version, sim.key_limits, problem, code);
}

std::optional<GradeOutcome> GradingSession::Answer(const Problem& problem, const std::string& code,
                                                   const std::string& key) {
  if (auto hit = cache_.FindVerdict(key)) {
    GradeOutcome out;
    out.verdict = std::move(*hit);
    out.source = VerdictSource::kCache;
    out.key = key;
    return out;
  }
  const DesignRun* reference = calibrations_.ReferenceRun(problem.name);
  if (reference != nullptr && code == ReferenceDesign(problem)) {
    GradeOutcome out;
    out.verdict =
        ClassifyRun(*reference, ToolFor(problem).kind, code, &calibrations_.Of(problem.name));
    out.source = VerdictSource::kReference;
    out.fault = out.verdict.category == category::kInternalError;
    out.key = key;
    return out;
  }
  return std::nullopt;
}

void GradingSession::Grade(const Problem& problem, std::string code, const SampleRef& ref,
                           Done done) {
  if (!calibrations_.Has(problem.name)) {
    GradeOutcome out =
        FaultOutcome("", "internal: problem " + problem.name + " was not calibrated");
    return done(out);
  }
  std::string key = VerdictKeyFor(problem, code);
  std::optional<Verdict> earlier;
  {
    MutexLock lock(mu_);
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
    if (!cross_.Wanted(answer->verdict) || answer->fault ||
        cross_.AttachCached(problem, code, ToolFor(problem), &answer->verdict))
      return Complete(problem, code, *answer, done);
    return CrossCheckThenComplete(problem, std::move(code), std::move(*answer), std::move(done));
  }
  SimulationJob job{&problem, code, key, ref};
  executor_->Submit(std::move(job),
                    [this, &problem, code = std::move(code), done = std::move(done)](
                        GradeOutcome& out) mutable { Complete(problem, code, out, done); });
}

void GradingSession::CrossCheckThenComplete(const Problem& problem, std::string code,
                                            GradeOutcome answer, Done done) {
  auto out = std::make_shared<GradeOutcome>(std::move(answer));
  pool_.Submit([this, &problem, code = std::move(code), out,
                done = std::move(done)](SandboxWorker& w) mutable {
    if (Stopped()) {
      MutexLock lock(mu_);
      entries_.erase(out->key);  // skipped, as a simulation not yet started is
      return;
    }
    cross_.Run(w, problem, code, ToolFor(problem), "", &out->verdict);
    Complete(problem, code, *out, done);
  });
}

void GradingSession::Complete(const Problem& problem, const std::string& code,
                              GradeOutcome& outcome, Done& owner) {
  if (outcome.source == VerdictSource::kSimulated && !outcome.fault) ++simulations_;
  if (!outcome.fault) {
    cache_.KeepVerdict(outcome.key, outcome.verdict);
    // Cross-checks made on a cluster worker: kept here (local ones kept themselves).
    if (outcome.verdict.cross_checked && outcome.source == VerdictSource::kSimulated && remote_)
      cross_.Keep(problem, code, ToolFor(problem), outcome.verdict);
  }
  std::vector<Done> waiters;
  {
    MutexLock lock(mu_);
    Entry& entry = entries_[outcome.key];
    waiters = std::move(entry.waiters);
    // A sandbox fault is no verdict on the code: a later submission simulates it again.
    if (outcome.fault) {
      entries_.erase(outcome.key);
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
    copy.key = outcome.key;
    copy.fault = outcome.fault;
    waiter(copy);
  }
}

void GradingSession::Wait() {
  pool_.Wait();
  executor_->Drain();
  pool_.Wait();
}

}  // namespace evald
