#include "evald/server/run_manager.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <csignal>
#include <cstdlib>

#include "base/hash.h"
#include "datasets/code_extractor.h"
#include "datasets/prompt_builder.h"
#include "evald/eval/evaluation.h"
#include "evald/eval/samples_reader.h"
#include "evald/eval/sandbox_pool.h"
#include "evald/metrics/serving_metrics.h"
#include "harness/calibration.h"
#include "harness/failure_category.h"
#include "harness/verdict_key.h"

namespace evald {

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool Terminal(v1::RunState s) {
  return s == v1::SUCCEEDED || s == v1::FAILED || s == v1::CANCELLED;
}

// Time-ordered, unique ids: readable in listings, sortable by creation.
std::string NewId(const char* prefix) {
  return fmt::format("{}-{:013d}-{}", prefix, NowMs(), RandomHex(4));
}

// Extracts the code of a sample's raw completion by the benchmark's rules.
void ExtractInto(Task task, const Problem& problem, v1::StoredSample* stored) {
  auto* ext = stored->mutable_result()->mutable_extraction();
  ExtractedCode code = ExtractCode(task, stored->completion(), problem.interface);
  stored->set_code(std::move(code.code));
  ext->set_method(code.method);
  ext->set_interface_prepended(code.interface_prepended);
  ext->clear_notes();
  for (auto& n : code.notes) ext->add_notes(n);
  stored->mutable_result()->set_code_sha256(Sha256Hex(stored->code()));
}

PromptOptions PromptOptionsOf(const v1::RunSpec& spec) {
  PromptOptions o;
  o.shots = spec.prompt().shots();
  o.rules = spec.prompt().rules();
  o.explain = spec.prompt().explain();
  o.system_in_prompt = spec.prompt().system_in_prompt();
  return o;
}

}  // namespace

bool ValidPageToken(std::string_view token) {
  size_t slash = token.rfind('/');
  if (slash == std::string_view::npos || token.size() - slash - 1 != 8) return false;
  std::string_view digits = token.substr(slash + 1);
  return IsValidProblemName(token.substr(0, slash)) &&
         digits.find_first_not_of("0123456789") == std::string_view::npos;
}

std::string SampleKey(const std::string& run_id, const std::string& problem, int index) {
  return fmt::format("{}/{}/{:08d}", run_id, problem, index);
}

// Fault injection for the crash-loop tests (tests/daemon_test.cc): with EVALD_FAULT_CRASH_ON_CODE
// set, grading a code that contains its value kills the process at once (SIGKILL: no core
// file, no cleanup), as a crash inside a tool's parser would.
static void MaybeInjectCrash(const std::string& code) {
  static const char* needle = std::getenv("EVALD_FAULT_CRASH_ON_CODE");
  if (needle != nullptr && *needle != '\0' && code.find(needle) != std::string::npos)
    ::raise(SIGKILL);
}

RunManager::RunManager(Store* store, RunManagerOptions options)
    : store_(store), options_(std::move(options)), in_flight_(store) {
  if (!options_.datasets.count("builtin")) options_.datasets["builtin"] = EVALD_BUILTIN_DATASET_DIR;
}

RunManager::~RunManager() {
  Stop();
}

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

Status RunManager::PutCheckpoint(v1::Checkpoint* checkpoint) {
  if (checkpoint->name().empty()) return Status::InvalidArgument("checkpoint needs a name");
  if (checkpoint->name().size() > 256) return Status::InvalidArgument("checkpoint name too long");
  EVALD_RETURN_IF_ERROR(NormalizeCheckpoint(checkpoint));
  checkpoint->set_id(NewId("ck"));
  checkpoint->set_created_unix_ms(NowMs());
  return store_->Put(Family::kCheckpoints, checkpoint->id(), *checkpoint);
}

StatusOr<v1::Checkpoint> RunManager::GetCheckpoint(const std::string& id) const {
  v1::Checkpoint ck;
  Status st = store_->Get(Family::kCheckpoints, id, &ck);
  if (!st.ok())
    return st.code() == Status::Code::kNotFound ? Status::NotFound("no checkpoint " + id) : st;
  return ck;
}

StatusOr<std::vector<v1::Checkpoint>> RunManager::ListCheckpoints() const {
  std::vector<v1::Checkpoint> out;
  Status st = store_->Scan(Family::kCheckpoints, "", [&](std::string_view, std::string_view value) {
    v1::Checkpoint ck;
    if (ck.ParseFromArray(value.data(), static_cast<int>(value.size())))
      out.push_back(std::move(ck));
    return true;
  });
  if (!st.ok()) return st;
  return out;
}

StatusOr<const Dataset*> RunManager::LoadDataset(const std::string& name, Task task) {
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

StatusOr<v1::Run> RunManager::CreateRun(v1::RunSpec spec, const std::string& samples_jsonl) {
  if (spec.dataset().empty()) spec.set_dataset("builtin");
  if (spec.task().empty()) spec.set_task("spec-to-rtl");
  if (spec.simulator().empty()) spec.set_simulator("iverilog");
  if (spec.k_size() == 0) {
    spec.add_k(1);
    spec.add_k(5);
  }
  for (int k : spec.k())
    if (k < 1 || k > 1000) return Status::InvalidArgument("k must be between 1 and 1000");
  auto task = ParseTask(spec.task());
  if (!task.ok()) return task.status();
  auto sim = ParseSimulator(spec.simulator());
  if (!sim.ok()) return sim.status();
  std::optional<v1::Checkpoint> checkpoint;
  if (!spec.checkpoint_id().empty()) {
    auto ck = GetCheckpoint(spec.checkpoint_id());
    if (!ck.ok()) return ck.status();
    checkpoint = *ck;
  }
  if (spec.backend().empty())
    spec.set_backend(samples_jsonl.empty() && checkpoint ? BackendFor(*checkpoint) : "samples");
  if (spec.backend() != "samples" && spec.backend() != "remote" && spec.backend() != "core" &&
      spec.backend() != "recorded")
    return Status::InvalidArgument("backend must be samples, remote, core or recorded, not '" +
                                   spec.backend() + "'");
  if (spec.backend() != "samples") {
    if (!checkpoint)
      return Status::InvalidArgument("backend " + spec.backend() + " needs a checkpoint_id");
    if (BackendFor(*checkpoint) != spec.backend())
      return Status::InvalidArgument("checkpoint " + checkpoint->id() + " (format " +
                                     checkpoint->format() + ") cannot be sampled by backend " +
                                     spec.backend());
    if (!samples_jsonl.empty())
      return Status::InvalidArgument("samples_jsonl is for backend samples only");
    EVALD_RETURN_IF_ERROR(NormalizeSampling(spec.mutable_sampling()));
    if (spec.prompt().shots() < 0 || spec.prompt().shots() > 4)
      return Status::InvalidArgument("prompt.shots must be 0..4");
    if (spec.hardware().empty()) spec.set_hardware(checkpoint->hardware());
  }
  auto ds = LoadDataset(spec.dataset(), *task);
  if (!ds.ok()) return ds.status();

  v1::Run run;
  run.set_id(NewId("run"));
  *run.mutable_spec() = spec;
  run.set_state(v1::QUEUED);
  run.set_created_unix_ms(NowMs());
  auto batch = store_->NewBatch();
  if (spec.backend() != "samples") {
    EVALD_RETURN_IF_ERROR(AddSamplingSamples(spec, **ds, *task, &run, &batch));
    EVALD_RETURN_IF_ERROR(StoreAndQueue(run, &batch));
    return run;
  }

  SamplesFile file = ParseSamplesJsonl(samples_jsonl);
  for (const auto& e : file.errors) *run.add_input_errors() = e;

  std::map<std::string, int> next_index;
  std::set<std::pair<std::string, int>> seen;
  int total = 0;
  for (const auto& s : file.samples) {
    const Problem* problem = (*ds)->Find(s.problem);
    auto reject = [&](const std::string& why) {
      v1::InputError* e = run.add_input_errors();
      e->set_line(s.line);
      e->set_message(why);
    };
    if (!problem) {
      reject("unknown problem '" + s.problem + "'");
      continue;
    }
    int index = s.index >= 0 ? s.index : next_index[s.problem];
    if (!seen.insert({s.problem, index}).second) {
      reject("problem '" + s.problem + "' already has a sample with index " +
             std::to_string(index));
      continue;
    }
    next_index[s.problem] = std::max(next_index[s.problem], index + 1);
    v1::StoredSample stored;
    stored.set_run_id(run.id());
    stored.set_problem(s.problem);
    stored.set_index(index);
    stored.set_line(s.line);
    stored.set_generated(true);
    if (s.has_code) {
      stored.set_code(s.text);
      stored.mutable_result()->mutable_extraction()->set_method("given");
      stored.mutable_result()->set_code_sha256(Sha256Hex(stored.code()));
    } else {
      stored.set_completion(s.text);
      ExtractInto(*task, *problem, &stored);
    }
    stored.mutable_result()->set_problem(s.problem);
    stored.mutable_result()->set_index(index);
    stored.mutable_result()->set_line(s.line);
    batch.Put(Family::kSamples, SampleKey(run.id(), s.problem, index), stored);
    ++total;
  }
  CapInputErrors(run.mutable_input_errors(), file.errors_dropped);
  if (total == 0)
    return Status::InvalidArgument("no usable sample in the upload" +
                                   (run.input_errors_size()
                                        ? ": line " + std::to_string(run.input_errors(0).line()) +
                                              ": " + run.input_errors(0).message()
                                        : std::string()));
  run.set_samples_total(total);
  EVALD_RETURN_IF_ERROR(StoreAndQueue(run, &batch));
  return run;
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

StatusOr<std::string> RunManager::GetRunBytes(const std::string& id) const {
  std::string bytes;
  Status st = store_->GetBytes(Family::kRuns, id, &bytes);
  if (!st.ok()) return st.code() == Status::Code::kNotFound ? Status::NotFound("no run " + id) : st;
  return bytes;
}

StatusOr<v1::Run> RunManager::GetRun(const std::string& id) const {
  auto bytes = GetRunBytes(id);
  if (!bytes.ok()) return bytes.status();
  v1::Run run;
  if (!run.ParseFromString(*bytes))
    return Status::Corruption("stored run " + id + " does not parse");
  return run;
}

StatusOr<std::vector<v1::Run>> RunManager::ListRuns(const RunFilter& f) const {
  std::vector<v1::Run> out;
  Status st = store_->Scan(Family::kRuns, "", [&](std::string_view, std::string_view value) {
    v1::Run run;
    if (!run.ParseFromArray(value.data(), static_cast<int>(value.size()))) return true;
    if (!f.checkpoint_id.empty() && run.spec().checkpoint_id() != f.checkpoint_id) return true;
    if (!f.dataset.empty() && run.spec().dataset() != f.dataset) return true;
    if (!f.label_key.empty()) {
      auto it = run.spec().labels().find(f.label_key);
      if (it == run.spec().labels().end() ||
          (!f.label_value.empty() && it->second != f.label_value))
        return true;
    }
    // Listings carry the summary, not the per-problem detail.
    run.clear_problems();
    run.clear_calibration();
    out.push_back(std::move(run));
    return true;
  });
  if (!st.ok()) return st;
  return out;
}

StatusOr<std::vector<v1::StoredSample>> RunManager::ListSamples(
    const std::string& run_id, const std::string& page_token, int limit,
    std::string* next_page_token) const {
  if (!page_token.empty() && !ValidPageToken(page_token))
    return Status::InvalidArgument("page_token '" + page_token.substr(0, 80) +
                                   "' is not one this API handed out (PROBLEM/00000042)");
  std::vector<v1::StoredSample> out;
  next_page_token->clear();
  std::string prefix = run_id + "/";
  Status st =
      store_->Scan(Family::kSamples, prefix, [&](std::string_view key, std::string_view value) {
        if (!page_token.empty() && std::string(key.substr(prefix.size())) <= page_token)
          return true;
        if (static_cast<int>(out.size()) == limit) {
          // The token is the position of the last sample returned ("problem/index").
          *next_page_token = fmt::format("{}/{:08d}", out.back().problem(), out.back().index());
          return false;
        }
        v1::StoredSample s;
        if (s.ParseFromArray(value.data(), static_cast<int>(value.size())))
          out.push_back(std::move(s));
        return true;
      });
  if (!st.ok()) return st;
  return out;
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
    run->set_finished_unix_ms(NowMs());
    ++counters_.runs_cancelled;
    return store_->Put(Family::kRuns, id, *run);
  }
  if (running_ == id) abort_running_ = true;
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
  run->set_finished_unix_ms(NowMs());
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
      abort_running_ = cancel_requested_.count(id) > 0;
    }
    Execute(id);
    std::lock_guard<std::mutex> lock(mu_);
    running_.clear();
  }
}

StatusOr<v1::EvalReport> RunManager::Report(const std::string& run_id) const {
  auto run = GetRun(run_id);
  if (!run.ok()) return run.status();
  v1::EvalReport report;
  report.set_dataset(run->spec().dataset());
  report.set_task(run->spec().task());
  report.set_simulator(run->spec().simulator());
  report.set_simulator_version(run->simulator_version());
  for (int k : run->spec().k()) report.add_k(k);
  for (const auto& c : run->calibration()) *report.add_calibration() = c;
  for (const auto& e : run->input_errors()) *report.add_input_errors() = e;
  report.set_sandbox_layers(run->sandbox_layers());
  if (run->has_serving()) *report.mutable_serving() = run->serving();
  if (!run->spec().checkpoint_id().empty()) *report.mutable_prompt() = run->spec().prompt();
  Status st =
      store_->Scan(Family::kSamples, run_id + "/", [&](std::string_view, std::string_view value) {
        v1::StoredSample s;
        if (s.ParseFromArray(value.data(), static_cast<int>(value.size())) && s.graded())
          *report.add_samples() = s.result();
        return true;
      });
  if (!st.ok()) return st;
  ComputeMetrics({run->spec().k().begin(), run->spec().k().end()}, &report);
  return report;
}

void RunManager::Execute(const std::string& run_id) {
  auto loaded = GetRun(run_id);
  if (!loaded.ok()) {
    spdlog::error("run {} vanished: {}", run_id, loaded.status().ToString());
    return;
  }
  v1::Run run = std::move(*loaded);
  if (Terminal(run.state())) return;
  auto fail = [&](const Status& st) { Finish(&run, v1::FAILED, st.ToString()); };
  auto task = ParseTask(run.spec().task());
  auto sim = ParseSimulator(run.spec().simulator());
  if (!task.ok()) return fail(task.status());
  if (!sim.ok()) return fail(sim.status());
  auto ds = LoadDataset(run.spec().dataset(), *task);
  if (!ds.ok()) return fail(ds.status());

  // What is left to sample and to grade; what was done before a restart stays as it is.
  const bool sampling = run.spec().backend() != "samples" && !run.spec().backend().empty();
  std::vector<v1::StoredSample> pending;
  std::vector<v1::RequestTiming> timings;  // of every request so far (serving metrics)
  int done = 0, generated = 0;
  Status scan =
      store_->Scan(Family::kSamples, run_id + "/", [&](std::string_view, std::string_view value) {
        v1::StoredSample s;
        if (!s.ParseFromArray(value.data(), static_cast<int>(value.size()))) return true;
        if (s.has_request_timing()) timings.push_back(s.request_timing());
        if (!sampling || s.generated()) ++generated;
        if (s.graded()) {
          ++done;
        } else {
          pending.push_back(std::move(s));
        }
        return true;
      });
  if (!scan.ok()) return fail(scan);
  run.set_samples_done(done);
  run.set_samples_generated(generated);
  run.set_generation_errors(0);
  run.set_state(v1::RUNNING);
  run.set_state_reason("");
  if (run.started_unix_ms() == 0) run.set_started_unix_ms(NowMs());
  if (!SaveRunDurably(run)) return;  // stopping: resumed at the next start

  // The backend comes first: a checkpoint that cannot be loaded fails the run before any
  // sandbox starts.
  std::unique_ptr<SamplingBackend> backend;
  v1::Checkpoint checkpoint;
  if (sampling) {
    auto ck = GetCheckpoint(run.spec().checkpoint_id());
    if (!ck.ok()) return fail(ck.status());
    checkpoint = *ck;
    auto b = MakeBackend(checkpoint, run.spec(), options_.backend);
    if (!b.ok()) return fail(b.status());
    backend = std::move(*b);
  }

  SandboxPool pool(options_.sandbox, options_.jobs);
  if (Status st = pool.Start(); !st.ok()) {
    ++counters_.sandbox_failures;
    return fail(st.Annotate("starting the sandbox"));
  }
  if (Status st = CheckSimulatorAllowed(pool, *sim); !st.ok()) return fail(st);
  run.set_sandbox_layers(pool.layers().Describe());
  run.set_simulator_version(SimulatorVersion(pool, *sim));
  if (run.simulator_version().empty())
    return fail(Status::Unavailable(run.spec().simulator() + " does not run in the sandbox"));

  std::set<std::string> names;
  std::vector<const Problem*> problems;
  for (const auto& s : pending)
    if (names.insert(s.problem()).second) problems.push_back((*ds)->Find(s.problem()));
  const SimulatorLimits base = DefaultLimits(*sim);
  CalibrationSet cals =
      CalibrateWithCache(pool, *sim, base, run.simulator_version(), problems, store_);
  counters_.simulations += cals.simulated;
  // Calibrations of problems graded before a restart are kept; the pending ones refreshed.
  std::map<std::string, v1::ProblemCalibration> calibration;
  for (const auto& c : run.calibration()) calibration[c.problem()] = c;
  for (const Problem* p : problems)
    calibration[p->name] =
        CalibrationProto(p->name, cals.calibration[p->name], cals.letters[p->name]);
  run.clear_calibration();
  for (auto& [name, c] : calibration) *run.add_calibration() = c;
  if (!SaveRunDurably(run)) return;  // stopping: resumed at the next start

  const std::string version = run.simulator_version();
  std::mutex progress_mu;  // one batch at a time: sample + run progress
  auto grade = [&](v1::StoredSample* s) {
    pool.Submit([&, s](SandboxWorker& worker) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_ || cancel_requested_.count(run_id)) return;
      }
      const Problem* problem = (*ds)->Find(s->problem());
      const Calibration& cal = cals.calibration[problem->name];
      std::string key = VerdictKey(*sim, version, base, *problem, s->code());
      Verdict v;
      std::optional<GradingInFlight::Attempt> attempt;  // held until the verdict is stored
      if (auto hit = store_->LookupVerdict(key)) {
        v = FromVerdictFields(*hit);
        ++counters_.cache_hits;
      } else if (std::string why;
                 !attempt.emplace(in_flight_.Begin(key, run_id, s->problem(), s->index(), &why))
                      .allowed()) {
        v.category = category::kInternalError;  // graded '!' for good, never cached
        v.detail = why;
        v.cacheable = false;
        spdlog::error("run {}: {} #{}: {}", run_id, s->problem(), s->index(), why);
      } else {
        auto t0 = std::chrono::steady_clock::now();
        MaybeInjectCrash(s->code());
        v = GradeDesign(worker, *sim, LimitsForProblem(base, cal, std::nullopt), *problem,
                        s->code(), &cal);
        counters_.grading_micros += std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::steady_clock::now() - t0)
                                        .count();
        ++counters_.simulations;
        if (v.category == category::kInternalError) {
          ++counters_.sandbox_failures;
          in_flight_.Abandon(key);
          return;  // left ungraded: a resumed run tries it again
        }
        if (v.cacheable) (void)store_->StoreVerdict(key, VerdictFields(v));
      }
      s->mutable_result()->MergeFrom(VerdictFields(v));
      s->set_graded(true);
      std::lock_guard<std::mutex> lock(progress_mu);
      run.set_samples_done(run.samples_done() + 1);
      auto batch = store_->NewBatch();
      batch.Put(Family::kSamples, SampleKey(run_id, s->problem(), s->index()), *s);
      batch.Put(Family::kRuns, run_id, run);
      // A refused code keeps its record: it is refused at once wherever it comes back.
      if (attempt && attempt->allowed()) in_flight_.Finish(key, &batch);
      if (WriteDurably(batch, run_id)) ++counters_.samples_graded;
    });
  };

  int failed_requests = 0;
  std::string first_generation_error;
  if (sampling) {
    const auto t_sampling = std::chrono::steady_clock::now();
    std::vector<v1::StoredSample*> to_generate;
    for (auto& s : pending) {
      if (s.generated()) {
        grade(&s);
      } else {
        to_generate.push_back(&s);
      }
    }
    // Requests: a problem's missing samples in runs of consecutive indices, as many per request
    // as the backend takes. Sample i is drawn with seed + i however the requests fall.
    const v1::SamplingParams& sp = run.spec().sampling();
    const SamplingSettings settings = SettingsOf(sp);
    std::map<std::string, Prompt> prompts;
    std::vector<SampleRequest> requests;
    std::vector<std::vector<v1::StoredSample*>> members;
    const int per_request = std::max(1, backend->MaxSamplesPerRequest());
    auto record_key = [&](const v1::StoredSample& s) {
      const Prompt& p = prompts[s.problem()];
      return GenerationKey(checkpoint.id() + "|" + backend->Kind(), p.SystemTurn(), p.user, sp,
                           sp.seed() + s.index(), s.index());
    };
    // A generated sample: extracted, stored with its generation record and the run's progress
    // in one batch, then graded.
    auto accept = [&](v1::StoredSample* s, const GeneratedSample& g, bool from_cache,
                      const v1::RequestTiming* timing) {
      const Problem* problem = (*ds)->Find(s->problem());
      s->set_completion(g.text);
      s->set_finish_reason(g.finish_reason);
      if (g.completion_tokens >= 0) s->set_completion_tokens(g.completion_tokens);
      s->set_generated(true);
      s->clear_generation_error();
      s->set_from_generation_cache(from_cache);
      if (timing) *s->mutable_request_timing() = *timing;
      ExtractInto(*task, *problem, s);
      v1::GenerationRecord rec;
      if (!from_cache) {
        const Prompt& p = prompts[s->problem()];
        rec.set_checkpoint_id(checkpoint.id());
        rec.set_system(p.SystemTurn());
        rec.set_prompt(p.user);
        *rec.mutable_sampling() = sp;
        rec.set_seed(sp.seed() + s->index());
        rec.set_index(s->index());
        rec.set_completion(g.text);
        rec.set_completion_tokens(std::max(0, g.completion_tokens));
        rec.set_created_unix_ms(NowMs());
      }
      ++(from_cache ? counters_.generation_cache_hits : counters_.samples_generated);
      {
        std::lock_guard<std::mutex> lock(progress_mu);
        run.set_samples_generated(run.samples_generated() + 1);
        auto batch = store_->NewBatch();
        batch.Put(Family::kSamples, SampleKey(run_id, s->problem(), s->index()), *s);
        if (!from_cache) batch.Put(Family::kGenerations, record_key(*s), rec);
        batch.Put(Family::kRuns, run_id, run);
        (void)WriteDurably(batch, run_id);
      }
      grade(s);
    };
    for (size_t i = 0; i < to_generate.size();) {
      v1::StoredSample* first = to_generate[i];
      if (!prompts.count(first->problem())) {
        auto p = BuildPrompt(**ds, *(*ds)->Find(first->problem()), PromptOptionsOf(run.spec()));
        if (!p.ok()) return fail(p.status().Annotate(first->problem()));
        prompts[first->problem()] = std::move(*p);
      }
      // Stored generations answer without asking the model again.
      if (auto rec = store_->LookupGeneration(record_key(*first))) {
        GeneratedSample g;
        g.text = rec->completion();
        g.finish_reason = "cached";
        g.completion_tokens = rec->completion_tokens();
        accept(first, g, true, nullptr);
        ++i;
        continue;
      }
      size_t j = i + 1;
      while (j < to_generate.size() && static_cast<int>(j - i) < per_request &&
             to_generate[j]->problem() == first->problem() &&
             to_generate[j]->index() == to_generate[j - 1]->index() + 1 &&
             !store_->LookupGeneration(record_key(*to_generate[j])))
        ++j;
      SampleRequest r;
      r.problem = first->problem();
      r.first_index = first->index();
      r.n = static_cast<int>(j - i);
      r.seed = static_cast<uint32_t>(sp.seed() + first->index());
      r.system = prompts[first->problem()].SystemTurn();
      r.user = prompts[first->problem()].user;
      r.sampling = settings;
      requests.push_back(std::move(r));
      members.emplace_back(to_generate.begin() + static_cast<long>(i),
                           to_generate.begin() + static_cast<long>(j));
      i = j;
    }
    spdlog::info("run {}: {} requests for {} samples to {} {}", run_id, requests.size(),
                 to_generate.size(), backend->Kind(), backend->Describe());
    backend->Run(
        requests,
        [&](size_t i, SampleResponse resp) {
          ++counters_.generation_requests;
          counters_.generation_retries += std::max(0, resp.timing.attempts() - 1);
          if (!resp.status.ok() || resp.samples.size() != members[i].size()) {
            ++counters_.generation_failures;
            std::string why = resp.status.ok() ? "the backend returned a wrong number of samples"
                                               : resp.status.ToString();
            std::lock_guard<std::mutex> lock(progress_mu);
            if (resp.status.code() != Status::Code::kCancelled) {
              ++failed_requests;
              if (first_generation_error.empty()) first_generation_error = why;
            }
            auto batch = store_->NewBatch();
            for (v1::StoredSample* s : members[i]) {
              s->set_generation_error(why);
              batch.Put(Family::kSamples, SampleKey(run_id, s->problem(), s->index()), *s);
            }
            run.set_generation_errors(run.generation_errors() +
                                      static_cast<int>(members[i].size()));
            batch.Put(Family::kRuns, run_id, run);
            (void)WriteDurably(batch, run_id);
            return;
          }
          {
            std::lock_guard<std::mutex> lock(progress_mu);
            timings.push_back(resp.timing);
          }
          counters_.generated_tokens += resp.timing.completion_tokens();
          for (size_t k = 0; k < members[i].size(); ++k)
            accept(members[i][k], resp.samples[k], false, k == 0 ? &resp.timing : nullptr);
        },
        abort_running_);
    {
      std::lock_guard<std::mutex> lock(progress_mu);
      run.set_sampling_seconds(
          run.sampling_seconds() +
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t_sampling).count());
    }
  } else {
    for (auto& sample : pending) grade(&sample);
  }
  pool.Wait();

  if (sampling) {
    v1::ServingMetrics m = AggregateServing(timings, failed_requests, run.sampling_seconds());
    m.set_backend(backend->Kind());
    m.set_endpoint(backend->Describe());
    m.set_hardware(run.spec().hardware());
    int cached = 0;
    (void)store_->Scan(Family::kSamples, run_id + "/",
                       [&](std::string_view, std::string_view value) {
                         v1::StoredSample s;
                         if (s.ParseFromArray(value.data(), static_cast<int>(value.size())) &&
                             s.from_generation_cache())
                           ++cached;
                         return true;
                       });
    m.set_cached_samples(cached);
    *run.mutable_serving() = m;
  }

  bool stopping = false, cancel = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping = stopping_;
    cancel = cancel_requested_.erase(run_id) > 0;
  }
  if (cancel) return Finish(&run, v1::CANCELLED, "cancelled while running");
  if (stopping) {
    (void)SaveRun(run);
    return;  // stays RUNNING in the store; resumed at the next start
  }
  if (run.samples_generated() != run.samples_total())
    return fail(Status::Unavailable(
        fmt::format("{} of {} samples could not be generated ({} requests failed; first: {}); "
                    "POST /v1/runs/{}/resume asks again for the missing ones",
                    run.samples_total() - run.samples_generated(), run.samples_total(),
                    failed_requests, first_generation_error, run_id)));
  if (run.samples_done() != run.samples_total())
    return fail(Status::Internal(
        fmt::format("{} of {} samples could not be graded (sandbox failures); "
                    "POST /v1/runs/{}/resume (or a daemon restart) grades them",
                    run.samples_total() - run.samples_done(), run.samples_total(), run_id)));
  auto report = Report(run_id);
  if (!report.ok()) return fail(report.status());
  *run.mutable_summary() = report->summary();
  run.clear_problems();
  for (const auto& p : report->problems()) *run.add_problems() = p;
  Finish(&run, v1::SUCCEEDED, "");
}

}  // namespace evald
