#include "evald/cli/drift_command.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "datasets/problem_category.h"
#include "datasets/prompt_builder.h"
#include "evald/backends/sampling_backend.h"
#include "evald/cli/report_io.h"
#include "evald/metrics/bootstrap.h"
#include "evald/metrics/distribution_drift.h"
#include "evald/proto/json.h"
#include "evald/runs/dataset_registry.h"
#include "evald/samples/samples_reader.h"
#include "kernels/chat/chat_format.h"
#include "kernels/chat/chat_renderer.h"
#include "kernels/generate/teacher_forcing.h"
#include "kernels/model/llama_model.h"
#include "kernels/tokenizer/tokenizer.h"

namespace evald {

namespace {

struct DriftFlags {
  std::string base, dataset = "builtin", task = "spec-to-rtl", samples, json;
  std::string api = "completions", chat_format;
  std::vector<std::string> candidates, problems;
};

struct LoadedFile {
  std::string path;
  std::unique_ptr<kernels::LlamaModel> model;
  std::unique_ptr<kernels::Tokenizer> tokenizer;
};

StatusOr<LoadedFile> Load(const std::string& path) {
  auto model = kernels::LlamaModel::Load(path);
  if (!model.ok()) return model.status().Annotate("loading " + path);
  auto tokenizer = kernels::LoadTokenizer((*model)->file());
  if (!tokenizer.ok()) return tokenizer.status().Annotate(path);
  return LoadedFile{path, std::move(*model), std::move(*tokenizer)};
}

// The prompt as the model sees it when served: plain completion text, or (api chat, `chat` the
// base file's renderer) the system and user turns rendered, ready for the assistant's turn.
StatusOr<std::string> PromptText(const Prompt& prompt, const LoadedFile& base,
                                 const kernels::ChatRenderer* chat) {
  if (!chat) return CompletionPromptText(prompt.SystemTurn(), prompt.user);
  return chat->Render(kernels::SystemAndUserTurns(prompt.SystemTurn(), prompt.user),
                      base.tokenizer->bos_text(), kernels::EosText(*base.tokenizer));
}

// The tokens of a text: a rendered chat's special tokens parsed (its BOS written by the
// template, else added as for plain text), plain text as Encode does.
std::vector<int> Tokens(const DriftFlags& f, const kernels::Tokenizer& tokenizer,
                        const std::string& text) {
  if (f.api == "completions") return tokenizer.Encode(text, tokenizer.add_bos());
  return kernels::ChatPromptTokens(tokenizer, text);
}

// A problem's text as the model sees it: the prompt, then the completion; `first` is where the
// completion's tokens start.
struct ScoredText {
  const Problem* problem;
  std::string text;
  std::vector<int> tokens;
  size_t first = 0;
};

StatusOr<std::vector<ScoredText>> Texts(const DriftFlags& f, const Dataset& dataset,
                                        const LoadedFile& base, v1::DriftReport* report) {
  const kernels::Tokenizer& tokenizer = *base.tokenizer;
  std::map<std::string, std::string> completions;  // the first of each problem in the file
  if (!f.samples.empty()) {
    auto samples = ReadSamplesJsonl(f.samples);
    if (!samples.ok()) return samples.status();
    for (const auto& s : samples->samples) completions.emplace(s.problem, s.text);
  }
  // The base file's template is parsed once for all the prompts.
  std::optional<kernels::ChatRenderer> chat;
  if (f.api != "completions") {
    auto renderer = kernels::ChatRenderer::ForFile(
        base.model->file().GetString("tokenizer.chat_template"), f.chat_format, base.path);
    if (!renderer.ok()) return renderer.status().Annotate("--api chat");
    chat = std::move(*renderer);
  }
  std::vector<ScoredText> out;
  for (const Problem& p : dataset.problems()) {
    if (!f.problems.empty() &&
        std::find(f.problems.begin(), f.problems.end(), p.name) == f.problems.end())
      continue;
    auto it = completions.find(p.name);
    if (!f.samples.empty() && it == completions.end()) continue;
    auto prompt = BuildPrompt(dataset, p, PromptOptions{});
    if (!prompt.ok()) return prompt.status();
    auto prefix = PromptText(*prompt, base, chat ? &*chat : nullptr);
    if (!prefix.ok()) return prefix.status();
    const std::string completion = f.samples.empty() ? p.reference : it->second;
    ScoredText t{&p, *prefix + completion, {}};
    t.tokens = Tokens(f, tokenizer, t.text);
    // Where the completion starts: the longest prefix the prompt alone encodes to.
    const std::vector<int> alone = Tokens(f, tokenizer, *prefix);
    while (t.first < alone.size() && t.first < t.tokens.size() &&
           alone[t.first] == t.tokens[t.first])
      ++t.first;
    t.first = std::max<size_t>(t.first, 1);
    if (static_cast<int64_t>(t.tokens.size()) > base.model->config().context) {
      spdlog::warn("{}: {} tokens do not fit the context of {}; left out", p.name, t.tokens.size(),
                   base.model->config().context);
      report->add_skipped(p.name);
      continue;
    }
    if (t.first < t.tokens.size()) out.push_back(std::move(t));
  }
  if (out.empty()) return Status::InvalidArgument("no problem to score (--problems, --samples)");
  return out;
}

// One problem's drift of `candidate` from `base` over its completion tokens.
StatusOr<DriftAccumulator> ProblemDrift(const LoadedFile& base, const LoadedFile& candidate,
                                        const ScoredText& text) {
  std::vector<std::vector<float>> base_logprobs;
  EVALD_RETURN_IF_ERROR(kernels::ForEachNextTokenLogprobs(
      *base.model, text.tokens, text.first, [&](size_t, std::span<const float> lp) {
        base_logprobs.emplace_back(lp.begin(), lp.end());
      }));
  DriftAccumulator acc;
  size_t k = 0;
  EVALD_RETURN_IF_ERROR(kernels::ForEachNextTokenLogprobs(
      *candidate.model, text.tokens, text.first, [&](size_t t, std::span<const float> lp) {
        acc.Add(CompareNextToken(base_logprobs[k++], lp, text.tokens[t]));
      }));
  return acc;
}

v1::ConfidenceInterval Interval95(const std::vector<double>& values) {
  const Interval ci = BootstrapMeanInterval(values);
  v1::ConfidenceInterval out;
  out.set_low(ci.low);
  out.set_high(ci.high);
  return out;
}

StatusOr<v1::DriftVariant> Variant(const DriftFlags& flags, const LoadedFile& base,
                                   const LoadedFile& candidate,
                                   const std::vector<ScoredText>& texts) {
  if (candidate.model->config().vocab != base.model->config().vocab)
    return Status::InvalidArgument(candidate.path + " has another vocabulary than " + base.path +
                                   ": not the same checkpoint");
  v1::DriftVariant v;
  v.set_file(candidate.path);
  DriftAccumulator all;
  std::map<std::string, DriftAccumulator> categories;
  std::vector<double> kl, top1;
  for (const ScoredText& t : texts) {
    if (Tokens(flags, *candidate.tokenizer, t.text) != t.tokens)
      return Status::InvalidArgument(candidate.path + " tokenizes " + t.problem->name +
                                     " differently from " + base.path +
                                     ": not the same checkpoint");
    auto acc = ProblemDrift(base, candidate, t);
    if (!acc.ok()) return acc.status().Annotate(t.problem->name);
    auto* p = v.add_problems();
    p->set_problem(t.problem->name);
    p->set_category(std::string(ProblemCategory(*t.problem)));
    *p->mutable_figures() = acc->Figures();
    kl.push_back(p->figures().mean_kl());
    top1.push_back(p->figures().top1_agreement());
    categories[p->category()].Merge(*acc);
    all.Merge(*acc);
  }
  *v.mutable_overall() = all.Figures();
  *v.mutable_mean_kl_ci95() = Interval95(kl);
  *v.mutable_top1_ci95() = Interval95(top1);
  for (const auto& [category, acc] : categories)
    (*v.mutable_by_category())[category] = acc.Figures();
  return v;
}

void PrintVariant(const v1::DriftVariant& v, std::ostream& out) {
  const auto& o = v.overall();
  out << fmt::format(
      "{}: {} tokens over {} problems\n  mean KL {:.6f} [{:.6f}, {:.6f}]  p99 KL {:.6f}  top-1 "
      "agreement {:.4f} [{:.4f}, {:.4f}]  delta-p RMS {:.4f}  PPL ratio {:.4f}\n",
      v.file(), o.tokens(), v.problems_size(), o.mean_kl(), v.mean_kl_ci95().low(),
      v.mean_kl_ci95().high(), o.p99_kl(), o.top1_agreement(), v.top1_ci95().low(),
      v.top1_ci95().high(), o.dp_rms(), o.ppl_ratio());
  std::map<std::string, v1::DriftFigures> sorted(v.by_category().begin(), v.by_category().end());
  for (const auto& [category, f] : sorted)
    out << fmt::format("  {:<14} {:>6} tokens  mean KL {:.6f}  top-1 {:.4f}  PPL ratio {:.4f}\n",
                       category, f.tokens(), f.mean_kl(), f.top1_agreement(), f.ppl_ratio());
  out << "  problem (most drift first): mean KL, top-1 agreement\n";
  std::vector<const v1::ProblemDrift*> problems;
  for (const auto& p : v.problems()) problems.push_back(&p);
  std::sort(problems.begin(), problems.end(), [](const auto* a, const auto* b) {
    return a->figures().mean_kl() > b->figures().mean_kl();
  });
  for (size_t i = 0; i < problems.size() && i < 10; ++i)
    out << fmt::format("    {:<32} {:.6f}  {:.4f}\n", problems[i]->problem(),
                       problems[i]->figures().mean_kl(), problems[i]->figures().top1_agreement());
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
  auto base = Load(f.base);
  if (!base.ok()) return Fail(base.status());
  v1::DriftReport report;
  auto texts = Texts(f, **dataset, *base, &report);
  if (!texts.ok()) return Fail(texts.status());
  report.set_base(f.base);
  report.set_dataset(f.dataset);
  report.set_task(f.task);
  report.set_completions(f.samples.empty() ? "references" : f.samples);
  for (const auto& path : f.candidates) {
    auto candidate = Load(path);
    if (!candidate.ok()) return Fail(candidate.status());
    auto variant = Variant(f, *base, *candidate, *texts);
    if (!variant.ok()) return Fail(variant.status());
    PrintVariant(*variant, std::cout);
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
  cmd->add_option("--task", f->task, "spec-to-rtl | code-complete-iccad2023");
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
