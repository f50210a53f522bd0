#include "evald/runs/drift_measurement.h"

#include <spdlog/spdlog.h>

#include <map>
#include <optional>

#include "datasets/problem_category.h"
#include "evald/backends/sampling_backend.h"
#include "evald/metrics/bootstrap.h"
#include "evald/metrics/distribution_drift.h"
#include "kernels/chat/chat_format.h"
#include "kernels/chat/chat_renderer.h"
#include "kernels/generate/teacher_forcing.h"
#include "kernels/model/llama_model.h"
#include "kernels/tokenizer/tokenizer.h"

namespace evald {

struct DriftMeasurement::Model {
  std::string path;
  std::unique_ptr<kernels::LlamaModel> model;
  std::unique_ptr<kernels::Tokenizer> tokenizer;
  std::optional<kernels::ChatRenderer> chat;  // the base file's, for chat prompts
};

// A problem's text as the model sees it: the prompt, then the completion; `first` is where the
// completion's tokens start.
struct DriftMeasurement::ScoredText {
  const Problem* problem;
  std::string text;
  std::vector<int> tokens;
  size_t first = 0;
};

namespace {

v1::ConfidenceInterval Interval95(const std::vector<double>& values) {
  const Interval ci = BootstrapMeanInterval(values);
  v1::ConfidenceInterval out;
  out.set_low(ci.low);
  out.set_high(ci.high);
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<DriftMeasurement::Model>> DriftMeasurement::LoadModel(
    const std::string& path) {
  auto model = kernels::LlamaModel::Load(path);
  if (!model.ok()) return model.status().Annotate("loading " + path);
  auto tokenizer = kernels::LoadTokenizer((*model)->file());
  if (!tokenizer.ok()) return tokenizer.status().Annotate(path);
  auto out = std::make_unique<DriftMeasurement::Model>();
  out->path = path;
  out->model = std::move(*model);
  out->tokenizer = std::move(*tokenizer);
  return out;
}

DriftMeasurement::DriftMeasurement(std::unique_ptr<Model> base, const DriftOptions& options)
    : base_(std::move(base)), options_(options) {}

DriftMeasurement::~DriftMeasurement() = default;

StatusOr<std::unique_ptr<DriftMeasurement>> DriftMeasurement::Open(const std::string& base_path,
                                                                   const DriftOptions& options) {
  auto base = LoadModel(base_path);
  if (!base.ok()) return base.status();
  if (options.chat) {
    auto renderer =
        kernels::ChatRenderer::ForFile((*base)->model->file().GetString("tokenizer.chat_template"),
                                       options.chat_format, base_path);
    if (!renderer.ok()) return renderer.status().Annotate("chat prompts");
    (*base)->chat = std::move(*renderer);
  }
  return std::unique_ptr<DriftMeasurement>(new DriftMeasurement(std::move(*base), options));
}

StatusOr<std::string> DriftMeasurement::PromptText(const Prompt& prompt) const {
  if (!base_->chat) return CompletionPromptText(prompt.SystemTurn(), prompt.user);
  return base_->chat->Render(kernels::SystemAndUserTurns(prompt.SystemTurn(), prompt.user),
                             base_->tokenizer->bos_text(), kernels::EosText(*base_->tokenizer));
}

// The tokens of a text: a rendered chat's special tokens parsed (its BOS written by the
// template, else added as for plain text), plain text as Encode does.
std::vector<int> DriftMeasurement::Tokens(const Model& model, const std::string& text) const {
  if (!options_.chat) return model.tokenizer->Encode(text, model.tokenizer->add_bos());
  return kernels::ChatPromptTokens(*model.tokenizer, text);
}

void DriftMeasurement::Add(const Problem& problem, const std::string& prompt_text,
                           const std::string& completion) {
  ScoredText t{&problem, prompt_text + completion, {}};
  t.tokens = Tokens(*base_, t.text);
  // Where the completion starts: the longest prefix the prompt alone encodes to.
  const std::vector<int> alone = Tokens(*base_, prompt_text);
  while (t.first < alone.size() && t.first < t.tokens.size() && alone[t.first] == t.tokens[t.first])
    ++t.first;
  t.first = std::max<size_t>(t.first, 1);
  if (static_cast<int64_t>(t.tokens.size()) > base_->model->config().context) {
    spdlog::warn("{}: {} tokens do not fit the context of {}; left out", problem.name,
                 t.tokens.size(), base_->model->config().context);
    skipped_.push_back(problem.name);
    return;
  }
  if (t.first < t.tokens.size()) texts_.push_back(std::move(t));
}

size_t DriftMeasurement::texts() const {
  return texts_.size();
}

namespace {

// One problem's drift of `candidate` from `base` over its completion tokens.
StatusOr<DriftAccumulator> ProblemDrift(const kernels::LlamaModel& base,
                                        const kernels::LlamaModel& candidate,
                                        const std::vector<int>& tokens, size_t first) {
  std::vector<std::vector<float>> base_logprobs;
  EVALD_RETURN_IF_ERROR(kernels::ForEachNextTokenLogprobs(
      base, tokens, first, [&](size_t, std::span<const float> lp) {
        base_logprobs.emplace_back(lp.begin(), lp.end());
      }));
  DriftAccumulator acc;
  size_t k = 0;
  EVALD_RETURN_IF_ERROR(kernels::ForEachNextTokenLogprobs(
      candidate, tokens, first, [&](size_t t, std::span<const float> lp) {
        acc.Add(CompareNextToken(base_logprobs[k++], lp, tokens[t]));
      }));
  return acc;
}

}  // namespace

StatusOr<v1::DriftVariant> DriftMeasurement::Measure(const std::string& candidate_path) const {
  auto candidate = LoadModel(candidate_path);
  if (!candidate.ok()) return candidate.status();
  const std::string& base_path = base_->path;
  if ((*candidate)->model->config().vocab != base_->model->config().vocab)
    return Status::InvalidArgument(candidate_path + " has another vocabulary than " + base_path +
                                   ": not the same checkpoint");
  v1::DriftVariant v;
  v.set_file(candidate_path);
  DriftAccumulator all;
  std::map<std::string, DriftAccumulator> categories;
  std::vector<double> kl, top1;
  for (const ScoredText& t : texts_) {
    if (options_.cancel != nullptr && options_.cancel->stopped())
      return Status::Cancelled("drift measurement stopped");
    if (Tokens(**candidate, t.text) != t.tokens)
      return Status::InvalidArgument(candidate_path + " tokenizes " + t.problem->name +
                                     " differently from " + base_path +
                                     ": not the same checkpoint");
    auto acc = ProblemDrift(*base_->model, *(*candidate)->model, t.tokens, t.first);
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

}  // namespace evald
