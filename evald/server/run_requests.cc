#include "evald/server/run_requests.h"

#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <set>

#include "base/clock.h"
#include "base/file_io.h"
#include "base/hash.h"
#include "datasets/prompt_builder.h"
#include "evald/runs/grading_settings.h"
#include "evald/runs/report_builder.h"
#include "evald/runs/run_drift.h"
#include "evald/runs/run_sampling.h"
#include "evald/runs/sample_plan.h"
#include "evald/runs/sampling_stage.h"
#include "evald/runs/store_sink.h"
#include "evald/samples/samples_reader.h"
#include "evald/server/run_records.h"

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

std::string SubmitterId(const std::string& token) {
  return Sha256Hex(token).substr(0, 16);
}

Status RunRequests::KeepUpload(v1::Checkpoint* checkpoint) {
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

Status RunRequests::PutCheckpoint(v1::Checkpoint* checkpoint) {
  if (checkpoint->name().empty()) return Status::InvalidArgument("checkpoint needs a name");
  if (checkpoint->name().size() > 256) return Status::InvalidArgument("checkpoint name too long");
  checkpoint->set_id(NewId("ck"));
  if (!checkpoint->recorded_completions().empty()) EVALD_RETURN_IF_ERROR(KeepUpload(checkpoint));
  EVALD_RETURN_IF_ERROR(NormalizeCheckpoint(checkpoint, options_.policy));
  checkpoint->set_created_unix_ms(UnixMillis());
  return store_->Put(Family::kCheckpoints, checkpoint->id(), *checkpoint);
}

Status RunRequests::DeleteCheckpoint(const std::string& id) {
  v1::Checkpoint checkpoint;
  EVALD_RETURN_IF_ERROR(store_->Get(Family::kCheckpoints, id, &checkpoint));
  RunFilter of_checkpoint;
  of_checkpoint.checkpoint_id = id;
  auto users = RunRecords(*store_).ListRuns(of_checkpoint);
  if (!users.ok()) return users.status();
  if (!users->empty())
    return Status::InvalidArgument(
        fmt::format("checkpoint {} is used by {} run(s) (first: {}); delete them first", id,
                    users->size(), users->front().id()));
  Store::Batch batch = store_->NewBatch();
  batch.Delete(Family::kCheckpoints, id);
  EVALD_RETURN_IF_ERROR(store_->Write(batch));
  // An upload lives in the operator's uploads folder under the checkpoint's own id; a location
  // anywhere else is a file the operator allowed, never evald's to remove.
  const std::string& dir = options_.policy.uploads_dir;
  if (!dir.empty() && checkpoint.location() == dir + "/" + id + ".jsonl") {
    std::error_code ec;
    std::filesystem::remove(checkpoint.location(), ec);
  }
  return Status::Ok();
}

// Defaults, ranges, and a backend that fits the checkpoint.
Status RunRequests::NormalizeRunSpec(const std::optional<v1::Checkpoint>& checkpoint,
                                     bool has_upload, v1::RunSpec* spec) const {
  if (spec->dataset().empty()) spec->set_dataset("builtin");
  if (spec->task().empty()) spec->set_task("spec-to-rtl");
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
  if (!v1::PromptStyle_IsValid(spec->prompt().style()))
    return Status::InvalidArgument(
        "prompt.style must be PROMPT_STYLE_BENCHMARK, "
        "PROMPT_STYLE_SYSTEM or PROMPT_STYLE_QUESTION_ANSWER");
  if (spec->hardware().empty()) spec->set_hardware(checkpoint->hardware());
  return Status::Ok();
}

Status RunRequests::NormalizeGrading(v1::RunSpec* spec) const {
  MoveLegacyGradingFields(spec);
  ApplyGradingDefaults(options_.grading_defaults, spec->mutable_grading());
  return NormalizeGradingSettings(spec->mutable_grading());
}

Status RunRequests::CheckDrift(const std::optional<v1::Checkpoint>& checkpoint,
                               v1::RunSpec* spec) const {
  if (!checkpoint) return Status::InvalidArgument("drift needs a checkpoint_id");
  const std::string& base_id = spec->drift().base_checkpoint_id();
  if (base_id.empty()) return Status::InvalidArgument("drift needs base_checkpoint_id");
  auto base = RunRecords(*store_).GetCheckpoint(base_id);
  if (!base.ok()) return base.status().Annotate("drift.base_checkpoint_id");
  return NormalizeDriftSpec(*checkpoint, *base, spec);
}

StatusOr<v1::Run> RunRequests::CreateRun(v1::RunSpec spec, const std::string& samples_jsonl,
                                         const Submitter* submitter) {
  std::optional<v1::Checkpoint> checkpoint;
  if (!spec.checkpoint_id().empty()) {
    auto ck = RunRecords(*store_).GetCheckpoint(spec.checkpoint_id());
    if (!ck.ok()) return ck.status();
    checkpoint = *ck;
    // A run of a checkpoint carries its labels (`?label=model=...` finds it); the run's own
    // labels win where both name one.
    for (const auto& [key, value] : checkpoint->labels())
      spec.mutable_labels()->insert({key, value});
  }
  EVALD_RETURN_IF_ERROR(NormalizeRunSpec(checkpoint, !samples_jsonl.empty(), &spec));
  EVALD_RETURN_IF_ERROR(NormalizeGrading(&spec));
  if (spec.has_drift()) EVALD_RETURN_IF_ERROR(CheckDrift(checkpoint, &spec));
  auto task = ParseTask(spec.task());
  if (!task.ok()) return task.status();
  auto dataset = datasets_->Find(spec.dataset(), *task);
  if (!dataset.ok()) return dataset.status();

  v1::Run run;
  run.set_id(NewId("run"));
  *run.mutable_spec() = spec;
  *run.mutable_benchmark() = BenchmarkOf(**dataset);
  run.set_state(v1::QUEUED);
  run.set_created_unix_ms(UnixMillis());
  auto batch = store_->NewBatch();
  if (spec.backend() != "samples") {
    EVALD_RETURN_IF_ERROR(AddSamplingSamples(spec, **dataset, &run, &batch));
  } else {
    EVALD_RETURN_IF_ERROR(AddUploadedSamples(samples_jsonl, **dataset, &run, &batch));
  }
  run.set_stored_bytes(static_cast<int64_t>(batch.ByteSize()));
  MutexLock lock(quota_mu_);
  if (submitter) {
    run.set_submitter(submitter->id);
    EVALD_RETURN_IF_ERROR(CheckQuotas(*submitter, run));
  }
  batch.Put(Family::kRuns, run.id(), run);
  EVALD_RETURN_IF_ERROR(store_->Write(batch));
  if (counters_) ++counters_->runs_created;
  return run;
}

Status RunRequests::CheckQuotas(const Submitter& who, const v1::Run& run) const {
  int in_flight = 0;
  int64_t queued = run.samples_total(), stored = run.stored_bytes();
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
Status RunRequests::AddUploadedSamples(const std::string& samples_jsonl, const Dataset& dataset,
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
  run->set_input_errors_total(run->input_errors_size() + file.errors_dropped);
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

Status RunRequests::AddSamplingSamples(const v1::RunSpec& spec, const Dataset& dataset,
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
  run->set_samples_total(static_cast<int>(problems.size()) * n);
  return Status::Ok();
}

}  // namespace evald
