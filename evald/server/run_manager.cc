#include "evald/server/run_manager.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>

#include "base/clock.h"
#include "base/file_io.h"
#include "base/hash.h"
#include "datasets/prompt_builder.h"
#include "evald/eval/samples_reader.h"
#include "evald/metrics/serving_metrics.h"
#include "evald/runs/cross_check_settings.h"
#include "evald/runs/grading_session.h"
#include "evald/runs/sample_plan.h"
#include "evald/runs/sampling_stage.h"
#include "evald/runs/scoring.h"
#include "evald/server/run_execution.h"

namespace evald {

namespace {

bool Terminal(v1::RunState s) {
  return s == v1::SUCCEEDED || s == v1::FAILED || s == v1::CANCELLED;
}

// Time-ordered, unique ids: readable in listings, sortable by creation.
std::string NewId(const char* prefix) {
  return fmt::format("{}-{:013d}-{}", prefix, UnixMillis(), RandomHex(4));
}

}  // namespace

Status RunManager::Start() {
  std::vector<v1::Run> interrupted;
  EVALD_RETURN_IF_ERROR(
      store_->Scan(Family::kRuns, "", [&](std::string_view, std::string_view value) {
        v1::Run run;
        if (run.ParseFromArray(value.data(), static_cast<int>(value.size())) &&
            !Terminal(run.state()))
          interrupted.push_back(std::move(run));
        return true;
      }));
  std::sort(interrupted.begin(), interrupted.end(),
            [](const v1::Run& a, const v1::Run& b) { return a.id() < b.id(); });
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& run : interrupted) {
      spdlog::info("resuming run {} ({} of {} samples graded)", run.id(), run.samples_done(),
                   run.samples_total());
      queue_.push_back(run.id());
    }
  }
  executor_ = std::thread(&RunManager::ExecutorMain, this);
  return Status::Ok();
}

void RunManager::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    abort_running_ = true;
  }
  cv_.notify_all();
  if (executor_.joinable()) executor_.join();
}

std::string SubmitterId(const std::string& token) {
  return Sha256Hex(token).substr(0, 16);
}

Status RunManager::KeepUpload(v1::Checkpoint* checkpoint) {
  if (checkpoint->format().empty()) checkpoint->set_format("recorded");
  if (checkpoint->format() != "recorded")
    return Status::InvalidArgument("recorded_completions is for recorded checkpoints");
  if (!checkpoint->location().empty())
    return Status::InvalidArgument("give recorded_completions or location, not both");
  const std::string& dir = options_.policy.uploads_dir;
  if (dir.empty()) return Status::InvalidArgument("this evald takes no uploaded checkpoints");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = dir + "/" + checkpoint->id() + ".jsonl";
  EVALD_RETURN_IF_ERROR(WriteFileAtomic(path, checkpoint->recorded_completions()));
  checkpoint->set_location(path);
  checkpoint->clear_recorded_completions();
  return Status::Ok();
}

Status RunManager::PutCheckpoint(v1::Checkpoint* checkpoint) {
  if (checkpoint->name().empty()) return Status::InvalidArgument("checkpoint needs a name");
  if (checkpoint->name().size() > 256) return Status::InvalidArgument("checkpoint name too long");
  checkpoint->set_id(NewId("ck"));
  if (!checkpoint->recorded_completions().empty()) EVALD_RETURN_IF_ERROR(KeepUpload(checkpoint));
  EVALD_RETURN_IF_ERROR(NormalizeCheckpoint(checkpoint, options_.policy));
  checkpoint->set_created_unix_ms(UnixMillis());
  return store_->Put(Family::kCheckpoints, checkpoint->id(), *checkpoint);
}

StatusOr<const Dataset*> RunManager::FindDataset(const std::string& name, Task task) {
  std::string key = name + "/" + std::string(TaskName(task));
  std::lock_guard<std::mutex> lock(mu_);
  auto it = datasets_.find(key);
  if (it != datasets_.end()) return it->second.get();
  auto path = options_.datasets.find(name);
  if (path == options_.datasets.end())
    return Status::InvalidArgument("unknown dataset '" + name + "' (the daemon serves: " + [&] {
      std::string names;
      for (const auto& [n, p] : options_.datasets) names += (names.empty() ? "" : ", ") + n;
      return names;
    }() + ")");
  auto ds = Dataset::Load(path->second, task);
  if (!ds.ok()) return ds.status();
  auto owned = std::make_unique<Dataset>(std::move(*ds));
  const Dataset* raw = owned.get();
  datasets_[key] = std::move(owned);
  return raw;
}

namespace {

// Defaults, ranges, and a backend that fits the checkpoint.
Status NormalizeRunSpec(const std::optional<v1::Checkpoint>& checkpoint, bool has_upload,
                        v1::RunSpec* spec) {
  if (spec->dataset().empty()) spec->set_dataset("builtin");
  if (spec->task().empty()) spec->set_task("spec-to-rtl");
  if (spec->simulator().empty()) spec->set_simulator("iverilog");
  if (spec->k_size() == 0) {
    spec->add_k(1);
    spec->add_k(5);
  }
  for (int k : spec->k())
    if (k < 1 || k > 1000) return Status::InvalidArgument("k must be between 1 and 1000");
  if (spec->backend().empty())
    spec->set_backend(!has_upload && checkpoint ? BackendFor(*checkpoint) : "samples");
  const std::string& backend = spec->backend();
  if (backend != "samples" && backend != "remote" && backend != "core" && backend != "recorded")
    return Status::InvalidArgument("backend must be samples, remote, core or recorded, not '" +
                                   backend + "'");
  if (backend == "samples") return Status::Ok();
  if (!checkpoint) return Status::InvalidArgument("backend " + backend + " needs a checkpoint_id");
  if (BackendFor(*checkpoint) != backend)
    return Status::InvalidArgument("checkpoint " + checkpoint->id() + " (format " +
                                   checkpoint->format() + ") cannot be sampled by backend " +
                                   backend);
  if (has_upload) return Status::InvalidArgument("samples_jsonl is for backend samples only");
  EVALD_RETURN_IF_ERROR(NormalizeSampling(spec->mutable_sampling()));
  if (spec->prompt().shots() < 0 || spec->prompt().shots() > 4)
    return Status::InvalidArgument("prompt.shots must be 0..4");
  if (spec->hardware().empty()) spec->set_hardware(checkpoint->hardware());
  return Status::Ok();
}

}  // namespace

StatusOr<v1::Run> RunManager::CreateRun(v1::RunSpec spec, const std::string& samples_jsonl,
                                        const Submitter* submitter) {
  std::optional<v1::Checkpoint> checkpoint;
  if (!spec.checkpoint_id().empty()) {
    auto ck = GetCheckpoint(spec.checkpoint_id());
    if (!ck.ok()) return ck.status();
    checkpoint = *ck;
  }
  EVALD_RETURN_IF_ERROR(NormalizeRunSpec(checkpoint, !samples_jsonl.empty(), &spec));
  if (!spec.has_cross_checks())
    *spec.mutable_cross_checks() = CrossCheckSettingsOf(DefaultCrossCheckOptions());
  EVALD_RETURN_IF_ERROR(ValidateCrossCheckSettings(spec.cross_checks()));
  auto task = ParseTask(spec.task());
  if (!task.ok()) return task.status();
  GradingOptions choice;
  EVALD_RETURN_IF_ERROR(ApplySimulatorChoice(spec.simulator(), &choice));
  auto ds = FindDataset(spec.dataset(), *task);
  if (!ds.ok()) return ds.status();

  v1::Run run;
  run.set_id(NewId("run"));
  *run.mutable_spec() = spec;
  run.set_state(v1::QUEUED);
  run.set_created_unix_ms(UnixMillis());
  auto batch = store_->NewBatch();
  if (spec.backend() != "samples") {
    EVALD_RETURN_IF_ERROR(AddSamplingSamples(spec, **ds, *task, &run, &batch));
  } else {
    EVALD_RETURN_IF_ERROR(AddUploadedSamples(samples_jsonl, **ds, &run, &batch));
  }
  if (!submitter) {
    EVALD_RETURN_IF_ERROR(StoreAndQueue(run, &batch));
    return run;
  }
  run.set_submitter(submitter->id);
  run.set_stored_bytes(static_cast<int64_t>(batch.ByteSize()));
  std::lock_guard<std::mutex> lock(quota_mu_);
  EVALD_RETURN_IF_ERROR(CheckQuotas(*submitter, run, run.stored_bytes()));
  EVALD_RETURN_IF_ERROR(StoreAndQueue(run, &batch));
  return run;
}

Status RunManager::CheckQuotas(const Submitter& who, const v1::Run& run, int64_t bytes) const {
  int in_flight = 0;
  int64_t queued = run.samples_total(), stored = bytes;
  EVALD_RETURN_IF_ERROR(store_->Scan(Family::kRuns, "", [&](std::string_view, std::string_view v) {
    v1::Run r;
    if (!r.ParseFromArray(v.data(), static_cast<int>(v.size())) || r.submitter() != who.id)
      return true;
    stored += r.stored_bytes();
    if (!Terminal(r.state())) {
      ++in_flight;
      queued += r.samples_total() - r.samples_done();
    }
    return true;
  }));
  const Quotas& q = who.quotas;
  if (in_flight + 1 > q.runs_in_flight)
    return Status::ResourceExhausted(
        fmt::format("quota: this token has {} runs queued or running (at most {})", in_flight,
                    q.runs_in_flight));
  if (queued > q.queued_samples)
    return Status::ResourceExhausted(
        fmt::format("quota: this run would leave {} samples to grade for this token (at most {})",
                    queued, q.queued_samples));
  if (stored > q.stored_bytes)
    return Status::ResourceExhausted(fmt::format(
        "quota: this token's runs would store {} bytes (at most {})", stored, q.stored_bytes));
  return Status::Ok();
}

// The upload planned like `evald eval` plans a samples file; each sample stored extracted.
Status RunManager::AddUploadedSamples(const std::string& samples_jsonl, const Dataset& dataset,
                                      v1::Run* run, Store::Batch* batch) {
  SamplesFile file = ParseSamplesJsonl(samples_jsonl);
  const SamplePlan plan = PlanUploadedSamples(dataset, file);
  for (const auto& e : file.errors) *run->add_input_errors() = e;
  for (const auto& e : plan.errors) *run->add_input_errors() = e;
  for (const PlannedSample& s : plan.samples) {
    v1::StoredSample stored;
    stored.set_run_id(run->id());
    stored.set_problem(s.problem->name);
    stored.set_index(s.index);
    stored.set_line(s.record->line);
    stored.set_generated(true);
    if (!s.record->has_code) stored.set_completion(s.record->text);
    stored.set_code(
        ExtractSample(dataset.task(), *s.problem, *s.record, s.index, stored.mutable_result()));
    batch->Put(Family::kSamples, SampleKey(run->id(), s.problem->name, s.index), stored);
  }
  CapInputErrors(run->mutable_input_errors(), file.errors_dropped);
  if (plan.samples.empty())
    return Status::InvalidArgument("no usable sample in the upload" +
                                   (run->input_errors_size()
                                        ? ": line " + std::to_string(run->input_errors(0).line()) +
                                              ": " + run->input_errors(0).message()
                                        : std::string()));
  run->set_samples_total(static_cast<int>(plan.samples.size()));
  return Status::Ok();
}

Status RunManager::StoreAndQueue(const v1::Run& run, Store::Batch* batch) {
  batch->Put(Family::kRuns, run.id(), run);
  EVALD_RETURN_IF_ERROR(store_->Write(*batch));
  ++counters_.runs_created;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(run.id());
  }
  cv_.notify_all();
  return Status::Ok();
}

Status RunManager::AddSamplingSamples(const v1::RunSpec& spec, const Dataset& dataset, Task task,
                                      v1::Run* run, Store::Batch* batch) {
  std::vector<const Problem*> problems;
  if (spec.problems_size() == 0) {
    for (const auto& p : dataset.problems()) problems.push_back(&p);
  } else {
    std::set<std::string> seen;
    for (const auto& name : spec.problems()) {
      const Problem* p = dataset.Find(name);
      if (!p) return Status::InvalidArgument("unknown problem '" + name + "' in problems");
      if (seen.insert(name).second) problems.push_back(p);
    }
  }
  if (problems.empty()) return Status::InvalidArgument("the dataset has no problems");
  const int n = spec.sampling().n();
  if (static_cast<int64_t>(problems.size()) * n > 1'000'000)
    return Status::InvalidArgument("more than a million samples in one run");
  for (const Problem* p : problems) {
    // The prompts are built again when the run executes; fail now if one cannot be.
    auto prompt = BuildPrompt(dataset, *p, PromptOptionsOf(spec));
    if (!prompt.ok()) return prompt.status().Annotate(p->name);
    for (int i = 0; i < n; ++i) {
      v1::StoredSample stored;
      stored.set_run_id(run->id());
      stored.set_problem(p->name);
      stored.set_index(i);
      stored.mutable_result()->set_problem(p->name);
      stored.mutable_result()->set_index(i);
      batch->Put(Family::kSamples, SampleKey(run->id(), p->name, i), stored);
    }
  }
  (void)task;
  run->set_samples_total(static_cast<int>(problems.size()) * n);
  return Status::Ok();
}

Status RunManager::Resume(const std::string& id) {
  auto run = GetRun(id);
  if (!run.ok()) return run.status();
  if (run->state() != v1::FAILED && run->state() != v1::CANCELLED)
    return Status::InvalidArgument("run " + id + " is " + v1::RunState_Name(run->state()) +
                                   "; only FAILED or CANCELLED runs resume");
  run->set_state(v1::QUEUED);
  run->set_state_reason("resumed");
  run->set_finished_unix_ms(0);
  std::lock_guard<std::mutex> lock(mu_);
  EVALD_RETURN_IF_ERROR(store_->Put(Family::kRuns, id, *run));
  cancel_requested_.erase(id);
  queue_.push_back(id);
  cv_.notify_all();
  return Status::Ok();
}

Status RunManager::Cancel(const std::string& id, const std::string& reason) {
  auto run = GetRun(id);
  if (!run.ok()) return run.status();
  if (Terminal(run->state()))
    return Status::InvalidArgument("run " + id + " already ended (" +
                                   v1::RunState_Name(run->state()) + ")");
  std::lock_guard<std::mutex> lock(mu_);
  cancel_requested_.insert(id);
  auto it = std::find(queue_.begin(), queue_.end(), id);
  if (it != queue_.end()) {
    queue_.erase(it);
    run->set_state(v1::CANCELLED);
    run->set_state_reason(reason.empty() ? "cancelled before it started" : reason);
    run->set_finished_unix_ms(UnixMillis());
    ++counters_.runs_cancelled;
    return store_->Put(Family::kRuns, id, *run);
  }
  if (running_ == id) {
    cancel_running_ = true;  // before abort: work on a cluster is cancelled too
    abort_running_ = true;
  }
  return Status::Ok();  // the executor notices and stops the running run
}

int RunManager::QueueDepth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(queue_.size()) + (running_.empty() ? 0 : 1);
}

Status RunManager::SaveRun(const v1::Run& run) {
  return store_->Put(Family::kRuns, run.id(), run);
}

bool RunManager::WriteDurably(Store::Batch& batch, const std::string& run_id) {
  for (int attempt = 0;; ++attempt) {
    Status st = store_->Write(batch);
    if (st.ok()) {
      if (attempt > 0) spdlog::info("run {}: the store accepts writes again; going on", run_id);
      return true;
    }
    if (attempt == 0)
      spdlog::error("run {}: {}; the run waits until the store accepts writes", run_id,
                    st.ToString());
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_) return false;
    cv_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_; });
  }
}

bool RunManager::SaveRunDurably(const v1::Run& run) {
  auto batch = store_->NewBatch();
  batch.Put(Family::kRuns, run.id(), run);
  return WriteDurably(batch, run.id());
}

void RunManager::Finish(v1::Run* run, v1::RunState state, const std::string& reason) {
  {
    // The run stops counting towards the queue depth before anyone can see it ended.
    std::lock_guard<std::mutex> lock(mu_);
    if (running_ == run->id()) running_.clear();
  }
  run->set_state(state);
  run->set_state_reason(reason);
  run->set_finished_unix_ms(UnixMillis());
  if (!SaveRunDurably(*run))
    spdlog::error("run {}: stopped before its end could be stored", run->id());
  if (state == v1::SUCCEEDED) ++counters_.runs_succeeded;
  if (state == v1::FAILED) ++counters_.runs_failed;
  if (state == v1::CANCELLED) ++counters_.runs_cancelled;
  spdlog::info("run {} {}{}", run->id(), v1::RunState_Name(state),
               reason.empty() ? "" : ": " + reason);
}

void RunManager::ExecutorMain() {
  while (true) {
    std::string id;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      id = queue_.front();
      queue_.pop_front();
      running_ = id;
      cancel_running_ = cancel_requested_.count(id) > 0;
      abort_running_ = cancel_running_.load();
    }
    Execute(id);
    std::lock_guard<std::mutex> lock(mu_);
    running_.clear();
  }
}

namespace {

// What a run has left to do; what was done before a restart stays as it is.
struct RunProgress {
  std::vector<v1::StoredSample> pending;   // not graded yet (generated or not)
  std::vector<v1::RequestTiming> timings;  // of every request so far (serving metrics)
  int done = 0, generated = 0, from_generation_cache = 0;
};

StatusOr<RunProgress> ScanProgress(Store& store, const std::string& run_id, bool sampling) {
  RunProgress out;
  Status st =
      store.Scan(Family::kSamples, run_id + "/", [&](std::string_view, std::string_view value) {
        v1::StoredSample s;
        if (!s.ParseFromArray(value.data(), static_cast<int>(value.size()))) return true;
        if (s.has_request_timing()) out.timings.push_back(s.request_timing());
        if (!sampling || s.generated()) ++out.generated;
        if (s.from_generation_cache()) ++out.from_generation_cache;
        if (s.graded()) {
          ++out.done;
        } else {
          out.pending.push_back(std::move(s));
        }
        return true;
      });
  if (!st.ok()) return st;
  return out;
}

std::vector<const Problem*> ProblemsOf(const Dataset& dataset,
                                       const std::vector<v1::StoredSample>& samples) {
  std::set<std::string> names;
  std::vector<const Problem*> problems;
  for (const auto& s : samples)
    if (names.insert(s.problem()).second) problems.push_back(dataset.Find(s.problem()));
  return problems;
}

// Calibrations of problems graded before a restart are kept; the pending ones refreshed.
void MergeCalibration(const GradingSession& grading, v1::Run* run) {
  std::map<std::string, v1::ProblemCalibration> calibration;
  for (const auto& c : run->calibration()) calibration[c.problem()] = c;
  for (const auto& [name, c] : grading.calibration_records()) calibration[name] = c;
  run->clear_calibration();
  for (auto& [name, c] : calibration) *run->add_calibration() = c;
}

}  // namespace

void RunManager::Execute(const std::string& run_id) {
  auto loaded = GetRun(run_id);
  if (!loaded.ok()) {
    spdlog::error("run {} vanished: {}", run_id, loaded.status().ToString());
    return;
  }
  v1::Run run = std::move(*loaded);
  if (Terminal(run.state())) return;
  Status st = ExecuteRun(&run);
  // Cancelled: the daemon is stopping; the run stays RUNNING and resumes at the next start.
  if (!st.ok() && st.code() != Status::Code::kCancelled) Finish(&run, v1::FAILED, st.ToString());
}

namespace {

Status Stopping() {
  return Status::Cancelled("the daemon is stopping");
}

}  // namespace

Status RunManager::ExecuteRun(v1::Run* run) {
  auto task = ParseTask(run->spec().task());
  if (!task.ok()) return task.status();
  GradingOptions choice;
  EVALD_RETURN_IF_ERROR(ApplySimulatorChoice(run->spec().simulator(), &choice));
  auto ds = FindDataset(run->spec().dataset(), *task);
  if (!ds.ok()) return ds.status();
  const bool sampling = run->spec().backend() != "samples" && !run->spec().backend().empty();
  auto progress = ScanProgress(*store_, run->id(), sampling);
  if (!progress.ok()) return progress.status();
  run->set_samples_done(progress->done);
  run->set_samples_generated(progress->generated);
  run->set_generation_errors(0);
  run->set_state(v1::RUNNING);
  run->set_state_reason("");
  if (run->started_unix_ms() == 0) run->set_started_unix_ms(UnixMillis());
  if (!SaveRunDurably(*run)) return Stopping();

  // The backend comes first: a checkpoint that cannot be loaded fails the run before any
  // sandbox starts.
  RunBackend backend;
  if (sampling) EVALD_RETURN_IF_ERROR(MakeRunBackend(*run, &backend));
  auto grading = OpenGrading(run, choice, **ds, progress->pending);
  if (!grading.ok()) return grading.status();
  if (!SaveRunDurably(*run)) return Stopping();

  RunExecution execution(run, **ds, *store_, **grading, in_flight_, counters_,
                         [&](Store::Batch& batch) { return WriteDurably(batch, run->id()); });
  std::vector<v1::StoredSample*> to_generate;
  for (auto& s : progress->pending) {
    if (s.generated() || !sampling) {
      execution.Grade(&s);
    } else {
      to_generate.push_back(&s);
    }
  }
  SamplingResult sampled;
  if (sampling) {
    SamplingStage stage(**ds, run->spec(), backend.checkpoint, *backend.backend, *store_,
                        &counters_.sampling);
    auto result = stage.Run(to_generate, execution, abort_running_);
    if (!result.ok()) {
      abort_running_ = true;  // nothing more is simulated; the run fails
      (*grading)->Wait();
      return result.status();
    }
    sampled = std::move(*result);
    execution.AddSamplingSeconds(sampled.seconds);
  }
  (*grading)->Wait();
  if (sampling) RecordServing(*backend.backend, progress->timings, sampled, run);
  Conclude(run, sampled);
  return Status::Ok();
}

Status RunManager::MakeRunBackend(const v1::Run& run, RunBackend* out) {
  auto ck = GetCheckpoint(run.spec().checkpoint_id());
  if (!ck.ok()) return ck.status();
  out->checkpoint = std::move(*ck);
  auto b = MakeBackend(out->checkpoint, run.spec(), options_.backend);
  if (!b.ok()) return b.status();
  out->backend = std::move(*b);
  return Status::Ok();
}

StatusOr<std::unique_ptr<GradingSession>> RunManager::OpenGrading(
    v1::Run* run, const GradingOptions& simulator_choice, const Dataset& dataset,
    const std::vector<v1::StoredSample>& pending) {
  GradingOptions g = simulator_choice;
  g.jobs = options_.jobs;
  g.sandbox = options_.sandbox;
  g.store = store_;
  g.guard = &in_flight_;
  g.abort = &abort_running_;
  g.cancel = &cancel_running_;
  g.executor = options_.executor;
  g.executor.dataset_folder = dataset.folder();
  g.executor.task = std::string(TaskName(dataset.task()));
  g.exact_mismatch_counts = run->spec().exact_mismatch_counts();
  g.cross = CrossCheckOptionsFrom(run->spec().cross_checks());
  auto grading = GradingSession::Open(g, ProblemsOf(dataset, pending));
  if (!grading.ok()) {
    ++counters_.sandbox_failures;
    return grading.status();
  }
  counters_.simulations += (*grading)->calibrations_simulated();
  run->set_sandbox_layers((*grading)->sandbox_layers());
  run->set_simulator_version((*grading)->simulator_version());
  *run->mutable_spec()->mutable_cross_checks() = CrossCheckSettingsOf((*grading)->cross_checks());
  run->mutable_spec()->mutable_cross_checks()->set_yosys_version((*grading)->yosys_version());
  MergeCalibration(**grading, run);
  return grading;
}

// Serving metrics over every request of the run, before and after restarts.
void RunManager::RecordServing(const SamplingBackend& backend,
                               std::vector<v1::RequestTiming> timings,
                               const SamplingResult& sampled, v1::Run* run) const {
  timings.insert(timings.end(), sampled.timings.begin(), sampled.timings.end());
  v1::ServingMetrics m =
      AggregateServing(timings, sampled.failed_requests, run->sampling_seconds());
  m.set_backend(backend.Kind());
  m.set_endpoint(backend.Describe());
  m.set_prompt_format(backend.PromptFormat());
  m.set_hardware(run->spec().hardware());
  m.set_cached_samples(CountCachedGenerations(run->id()));
  AddPerEndpointServing(timings, &m);
  for (const EndpointHealth& h : backend.Health()) {
    v1::EndpointServing* e = nullptr;
    for (auto& existing : *m.mutable_per_endpoint())
      if (existing.endpoint() == h.endpoint) e = &existing;
    if (e == nullptr) (e = m.add_per_endpoint())->set_endpoint(h.endpoint);
    e->set_failed_attempts(h.failed_attempts);
    e->set_times_taken_out(h.times_taken_out);
  }
  *run->mutable_serving() = m;
}

void RunManager::Conclude(v1::Run* run, const SamplingResult& sampled) {
  const std::string& id = run->id();
  bool stopping = false, cancel = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping = stopping_;
    cancel = cancel_requested_.erase(id) > 0;
  }
  if (cancel) return Finish(run, v1::CANCELLED, "cancelled while running");
  if (stopping) {
    (void)SaveRun(*run);
    return;  // stays RUNNING in the store; resumed at the next start
  }
  auto fail = [&](const Status& st) { Finish(run, v1::FAILED, st.ToString()); };
  if (run->samples_generated() != run->samples_total())
    return fail(Status::Unavailable(
        fmt::format("{} of {} samples could not be generated ({} requests failed; first: {}); "
                    "POST /v1/runs/{}/resume asks again for the missing ones",
                    run->samples_total() - run->samples_generated(), run->samples_total(),
                    sampled.failed_requests, sampled.first_error, id)));
  if (run->samples_done() != run->samples_total())
    return fail(Status::Internal(
        fmt::format("{} of {} samples could not be graded (sandbox failures); "
                    "POST /v1/runs/{}/resume (or a daemon restart) grades them",
                    run->samples_total() - run->samples_done(), run->samples_total(), id)));
  auto report = Report(id);
  if (!report.ok()) return fail(report.status());
  *run->mutable_summary() = report->summary();
  run->clear_problems();
  for (const auto& p : report->problems()) *run->add_problems() = p;
  Finish(run, v1::SUCCEEDED, "");
}

}  // namespace evald
