#include "evald/cli/drift_command.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>

#include "datasets/prompt_builder.h"
#include "datasets/task.h"
#include "evald/cli/report_io.h"
#include "evald/proto/json.h"
#include "evald/runs/dataset_registry.h"
#include "evald/runs/drift_measurement.h"
#include "evald/samples/samples_reader.h"
#include "evald/text/report_printer.h"

namespace evald {

namespace {

struct DriftFlags {
  std::string base, dataset = "builtin", task = "spec-to-rtl", samples, json;
  std::string api = "completions", chat_format;
  std::vector<std::string> candidates, problems;
};

// Adds each problem's prompt, then its completion (its reference, or the first sample of it in
// --samples), to the measurement.
Status AddTexts(const DriftFlags& f, const Dataset& dataset, DriftMeasurement& drift) {
  std::map<std::string, std::string> completions;  // the first of each problem in the file
  if (!f.samples.empty()) {
    auto samples = ReadSamplesJsonl(f.samples);
    if (!samples.ok()) return samples.status();
    for (const auto& s : samples->samples) completions.emplace(s.problem, s.text);
  }
  for (const Problem& p : dataset.problems()) {
    if (!f.problems.empty() &&
        std::find(f.problems.begin(), f.problems.end(), p.name) == f.problems.end())
      continue;
    auto it = completions.find(p.name);
    if (!f.samples.empty() && it == completions.end()) continue;
    auto prompt = BuildPrompt(dataset, p, PromptOptions{});
    if (!prompt.ok()) return prompt.status();
    auto prefix = drift.PromptText(*prompt);
    if (!prefix.ok()) return prefix.status();
    drift.Add(p, *prefix, f.samples.empty() ? p.reference : it->second);
  }
  if (drift.texts() == 0)
    return Status::InvalidArgument("no problem to score (--problems, --samples)");
  return Status::Ok();
}

int RunDrift(const DriftFlags& f) {
  auto task = ParseTask(f.task);
  if (!task.ok()) return Fail(task.status());
  if (f.api != "completions" && f.api != "chat")
    return Fail(Status::InvalidArgument("--api must be completions or chat"));
  DatasetRegistry registry(f.dataset == "builtin"
                               ? std::map<std::string, std::string>{}
                               : std::map<std::string, std::string>{{"dataset", f.dataset}});
  auto dataset = registry.Find(f.dataset == "builtin" ? "builtin" : "dataset", *task);
  if (!dataset.ok()) return Fail(dataset.status());
  auto drift = DriftMeasurement::Open(f.base, {f.api == "chat", f.chat_format, nullptr});
  if (!drift.ok())
    return Fail(f.api == "chat" ? drift.status().Annotate("--api chat") : drift.status());
  if (Status st = AddTexts(f, **dataset, **drift); !st.ok()) return Fail(st);
  v1::DriftReport report;
  report.set_base(f.base);
  report.set_dataset(f.dataset);
  report.set_task(f.task);
  report.set_completions(f.samples.empty() ? "references" : f.samples);
  for (const auto& skipped : (*drift)->skipped()) report.add_skipped(skipped);
  for (const auto& path : f.candidates) {
    auto variant = (*drift)->Measure(path);
    if (!variant.ok()) return Fail(variant.status());
    PrintDriftVariant(*variant, std::cout);
    *report.add_variants() = std::move(*variant);
  }
  if (!f.json.empty()) {
    if (Status st = WriteJson(report, f.json); !st.ok()) return Fail(st);
  }
  return 0;
}

}  // namespace

void RegisterDriftCommand(CLI::App& app, std::function<int()>* run) {
  auto f = std::make_shared<DriftFlags>();
  auto* cmd = app.add_subcommand(
      "drift",
      "how far quantized weight files' distributions drift from a baseline's on the "
      "benchmark's prompts (teacher-forced KL, top-1 agreement, perplexity ratio)");
  cmd->add_option("--base", f->base, "the baseline GGUF file (F32/F16/Q8_0)")->required();
  cmd->add_option("--candidate", f->candidates, "a GGUF file of the same checkpoint (repeatable)")
      ->required();
  cmd->add_option("--dataset", f->dataset,
                  "builtin, or a verilog-eval checkout / dataset_* folder");
  cmd->add_option("--task", f->task, TaskChoices());
  cmd->add_option("--samples", f->samples,
                  "completions (samples JSONL; the first of each problem); default: the "
                  "references");
  cmd->add_option("--problems", f->problems, "only these problems");
  cmd->add_option("--api", f->api,
                  "completions (plain prompt text) | chat (the system and user turns rendered "
                  "in the model's chat format, as a chat endpoint serves them)");
  cmd->add_option("--chat-format", f->chat_format,
                  "--api chat: the format (default: recognised from the base file's template)");
  cmd->add_option("--json", f->json, "write the report as JSON");
  cmd->callback([f, run] { *run = [f] { return RunDrift(*f); }; });
}

}  // namespace evald
