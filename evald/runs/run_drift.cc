#include "evald/runs/run_drift.h"

#include <map>

#include "evald/runs/drift_measurement.h"
#include "evald/runs/sampling_stage.h"
#include "evald/store/store.h"

namespace evald {

Status NormalizeDriftSpec(const v1::Checkpoint& checkpoint, const v1::Checkpoint& base,
                          v1::RunSpec* spec) {
  v1::DriftSpec* drift = spec->mutable_drift();
  if (spec->backend() != "core" || checkpoint.format() != "gguf")
    return Status::InvalidArgument(
        "drift is measured for runs of a gguf checkpoint on the decoding core (backend core)");
  if (base.format() != "gguf")
    return Status::InvalidArgument("drift.base_checkpoint_id must name a gguf checkpoint, not " +
                                   base.format());
  if (drift->completions().empty()) drift->set_completions("samples");
  if (drift->completions() != "samples" && drift->completions() != "references")
    return Status::InvalidArgument("drift.completions must be samples or references, not '" +
                                   drift->completions() + "'");
  return Status::Ok();
}

namespace {

// A gguf checkpoint of the store and its file, checked against the policy again now.
struct GgufFile {
  v1::Checkpoint checkpoint;
  std::string path;
};

StatusOr<GgufFile> ModelFile(const Store& store, const std::string& checkpoint_id,
                             const OperatorPolicy& policy) {
  GgufFile out;
  Status st = store.Get(Family::kCheckpoints, checkpoint_id, &out.checkpoint);
  if (!st.ok())
    return st.code() == Status::Code::kNotFound ? Status::NotFound("no checkpoint " + checkpoint_id)
                                                : st;
  if (out.checkpoint.format() != "gguf")
    return Status::InvalidArgument(checkpoint_id + " is not gguf");
  auto path = CheckCheckpointFile(out.checkpoint.location(), CheckpointFile::kModel, policy);
  if (!path.ok()) return path.status();
  out.path = std::move(*path);
  return out;
}

// Each problem's first generated sample: what the model was given and what it wrote.
struct FirstSample {
  std::string prompt, completion;
};

StatusOr<std::map<std::string, FirstSample>> FirstSamples(const Store& store,
                                                          const std::string& run_id) {
  std::map<std::string, FirstSample> out;
  std::map<std::string, int> index;
  Status st =
      store.Scan(Family::kSamples, run_id + "/", [&](std::string_view, std::string_view value) {
        v1::StoredSample s;
        if (!s.ParseFromArray(value.data(), static_cast<int>(value.size())) || !s.generated())
          return true;
        auto it = index.find(s.problem());
        if (it != index.end() && it->second <= s.index()) return true;
        index[s.problem()] = s.index();
        out[s.problem()] = {s.rendered_prompt(), s.completion()};
        return true;
      });
  if (!st.ok()) return st;
  return out;
}

// The run's problems, each with its prompt text and the completion to score.
Status AddRunTexts(const Store& store, const v1::Run& run, const Dataset& dataset,
                   DriftMeasurement& drift) {
  auto samples = FirstSamples(store, run.id());
  if (!samples.ok()) return samples.status();
  const bool references = run.spec().drift().completions() == "references";
  for (const auto& [name, sample] : *samples) {
    const Problem* problem = dataset.Find(name);
    if (problem == nullptr) continue;
    std::string prompt = references ? "" : sample.prompt;
    if (prompt.empty()) {
      auto built = BuildPrompt(dataset, *problem, PromptOptionsOf(run.spec()));
      if (!built.ok()) return built.status().Annotate(name);
      auto text = drift.PromptText(*built);
      if (!text.ok()) return text.status().Annotate(name);
      prompt = std::move(*text);
    }
    drift.Add(*problem, prompt, references ? problem->reference : sample.completion);
  }
  if (drift.texts() == 0) return Status::InvalidArgument("drift: no problem has a text to score");
  return Status::Ok();
}

}  // namespace

StatusOr<v1::DriftReport> MeasureRunDrift(const Store& store, const v1::Run& run,
                                          const Dataset& dataset, const OperatorPolicy& policy,
                                          const CancelToken* cancel) {
  const v1::DriftSpec& spec = run.spec().drift();
  auto base = ModelFile(store, spec.base_checkpoint_id(), policy);
  if (!base.ok()) return base.status().Annotate("drift base");
  auto file = ModelFile(store, run.spec().checkpoint_id(), policy);
  if (!file.ok()) return file.status();
  const v1::Checkpoint& ck = file->checkpoint;
  auto drift = DriftMeasurement::Open(base->path, {ck.api() == "chat", ck.chat_format(), cancel});
  if (!drift.ok()) return drift.status();
  EVALD_RETURN_IF_ERROR(AddRunTexts(store, run, dataset, **drift));
  v1::DriftReport report;
  report.set_base(base->path);
  report.set_dataset(run.spec().dataset());
  report.set_task(run.spec().task());
  report.set_completions(spec.completions() == "references" ? "references"
                                                            : "samples of run " + run.id());
  for (const auto& skipped : (*drift)->skipped()) report.add_skipped(skipped);
  auto variant = (*drift)->Measure(file->path);
  if (!variant.ok()) return variant.status();
  *report.add_variants() = std::move(*variant);
  return report;
}

}  // namespace evald
