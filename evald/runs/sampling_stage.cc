#include "evald/runs/sampling_stage.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <mutex>

#include "base/clock.h"
#include "evald/runs/run_sampling.h"
#include "evald/runs/sample_plan.h"
#include "evald/store/store.h"

namespace evald {

PromptOptions PromptOptionsOf(const v1::RunSpec& spec) {
  PromptOptions o;
  o.shots = spec.prompt().shots();
  o.rules = spec.prompt().rules();
  o.explain = spec.prompt().explain();
  o.system_in_prompt = spec.prompt().system_in_prompt();
  switch (spec.prompt().style()) {
    case v1::PROMPT_STYLE_SYSTEM:
      o.style = PromptStyle::kSystemMessage;
      break;
    case v1::PROMPT_STYLE_QUESTION_ANSWER:
      o.style = PromptStyle::kQuestionAnswer;
      break;
    default:  // a value out of range is refused when the run is created (RunRequests)
      o.style = PromptStyle::kBenchmark;
  }
  return o;
}

v1::PromptStyle ProtoPromptStyle(PromptStyle style) {
  switch (style) {
    case PromptStyle::kSystemMessage:
      return v1::PROMPT_STYLE_SYSTEM;
    case PromptStyle::kQuestionAnswer:
      return v1::PROMPT_STYLE_QUESTION_ANSWER;
    case PromptStyle::kBenchmark:
      break;
  }
  return v1::PROMPT_STYLE_BENCHMARK;
}

SamplingStage::SamplingStage(const Dataset& dataset, const v1::RunSpec& spec,
                             const v1::Checkpoint& checkpoint, SamplingBackend& backend,
                             Store& store, SamplingCounters* counters)
    : dataset_(dataset),
      spec_(spec),
      checkpoint_(checkpoint),
      backend_(backend),
      store_(store),
      counters_(counters ? counters : &own_counters_) {}

Status SamplingStage::BuildPrompt(const std::string& problem) {
  if (prompts_.count(problem)) return Status::Ok();
  auto p = evald::BuildPrompt(dataset_, *dataset_.Find(problem), PromptOptionsOf(spec_));
  if (!p.ok()) return p.status().Annotate(problem);
  prompts_[problem] = std::move(*p);
  return Status::Ok();
}

std::string SamplingStage::RecordKey(const v1::StoredSample& s) {
  const Prompt& p = prompts_.at(s.problem());
  const v1::SamplingParams& sp = spec_.sampling();
  // A chat the core renders is a different prompt from the same turns as completion text:
  // stored generations of one never answer the other. (Plain completions and a server's own
  // chat template keep the keys they always had.)
  std::string source = checkpoint_.id() + "|" + backend_.Kind();
  if (const std::string format = backend_.PromptFormat(); format.rfind("chat: ", 0) == 0)
    source += "|" + format;
  return GenerationKey(source, p.SystemTurn(), p.user, sp, sp.seed() + s.index(), s.index());
}

StatusOr<std::vector<SamplingStage::Batch>> SamplingStage::Plan(
    const std::vector<v1::StoredSample*>& to_generate, SamplingSink& sink) {
  const v1::SamplingParams& sp = spec_.sampling();
  const SamplingSettings settings = SettingsOf(sp);
  const int per_request = std::max(1, backend_.MaxSamplesPerRequest());
  std::vector<Batch> batches;
  for (size_t i = 0; i < to_generate.size();) {
    v1::StoredSample* first = to_generate[i];
    EVALD_RETURN_IF_ERROR(BuildPrompt(first->problem()));
    // Stored generations answer without asking the model again.
    if (auto rec = store_.LookupGeneration(RecordKey(*first))) {
      GeneratedSample g;
      g.text = rec->completion();
      g.finish_reason = "cached";
      g.completion_tokens = rec->completion_tokens();
      g.rendered_prompt = rec->rendered_prompt();
      Accept(first, g, true, nullptr, sink);
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < to_generate.size() && static_cast<int>(j - i) < per_request &&
           to_generate[j]->problem() == first->problem() &&
           to_generate[j]->index() == to_generate[j - 1]->index() + 1 &&
           !store_.LookupGeneration(RecordKey(*to_generate[j])))
      ++j;
    Batch b;
    const Prompt& prompt = prompts_.at(first->problem());
    b.request.problem = first->problem();
    b.request.first_index = first->index();
    b.request.n = static_cast<int>(j - i);
    b.request.seed = static_cast<uint32_t>(sp.seed() + first->index());
    b.request.system = prompt.SystemTurn();
    b.request.user = prompt.user;
    b.request.sampling = settings;
    b.samples.assign(to_generate.begin() + static_cast<long>(i),
                     to_generate.begin() + static_cast<long>(j));
    batches.push_back(std::move(b));
    i = j;
  }
  return batches;
}

void SamplingStage::Accept(v1::StoredSample* s, const GeneratedSample& g, bool from_cache,
                           const v1::RequestTiming* timing, SamplingSink& sink) {
  const Problem* problem = dataset_.Find(s->problem());
  s->set_completion(g.text);
  s->set_finish_reason(g.finish_reason);
  s->set_rendered_prompt(g.rendered_prompt);
  if (g.completion_tokens >= 0) s->set_completion_tokens(g.completion_tokens);
  s->set_generated(true);
  s->clear_generation_error();
  s->set_from_generation_cache(from_cache);
  if (timing) *s->mutable_request_timing() = *timing;
  s->set_code(ExtractCompletion(dataset_.task(), *problem, s->completion(), s->mutable_result()));
  ++(from_cache ? counters_->cache_hits : counters_->samples_generated);
  if (from_cache) return sink.Generated(s, nullptr, "");
  const Prompt& p = prompts_.at(s->problem());
  v1::GenerationRecord rec;
  rec.set_checkpoint_id(checkpoint_.id());
  rec.set_system(p.SystemTurn());
  rec.set_prompt(p.user);
  *rec.mutable_sampling() = spec_.sampling();
  rec.set_seed(spec_.sampling().seed() + s->index());
  rec.set_index(s->index());
  rec.set_completion(g.text);
  rec.set_rendered_prompt(g.rendered_prompt);
  rec.set_completion_tokens(std::max(0, g.completion_tokens));
  rec.set_created_unix_ms(UnixMillis());
  sink.Generated(s, &rec, RecordKey(*s));
}

void SamplingStage::Answer(Batch& batch, SampleResponse& resp, SamplingSink& sink,
                           SamplingResult* result) {
  ++counters_->requests;
  counters_->retries += std::max(0, resp.timing.attempts() - 1);
  if (!resp.status.ok() || resp.samples.size() != batch.samples.size()) {
    ++counters_->failures;
    const std::string why = resp.status.ok() ? "the backend returned a wrong number of samples"
                                             : resp.status.ToString();
    const bool cancelled = resp.status.code() == Status::Code::kCancelled;
    if (!cancelled) {
      ++result->failed_requests;
      if (result->first_error.empty()) result->first_error = why;
    }
    for (v1::StoredSample* s : batch.samples) s->set_generation_error(why);
    return sink.Failed(batch.samples, cancelled);
  }
  result->timings.push_back(resp.timing);
  counters_->generated_tokens += resp.timing.completion_tokens();
  for (size_t k = 0; k < batch.samples.size(); ++k)
    Accept(batch.samples[k], resp.samples[k], false, k == 0 ? &resp.timing : nullptr, sink);
}

StatusOr<SamplingResult> SamplingStage::Run(const std::vector<v1::StoredSample*>& to_generate,
                                            SamplingSink& sink, const CancelToken& cancel) {
  const auto started = std::chrono::steady_clock::now();
  auto batches = Plan(to_generate, sink);
  if (!batches.ok()) return batches.status();
  std::vector<SampleRequest> requests;
  for (const Batch& b : *batches) requests.push_back(b.request);
  spdlog::info("{} requests for {} samples to {} {}", requests.size(), to_generate.size(),
               backend_.Kind(), backend_.Describe());
  SamplingResult result;
  // The backend never calls `done` twice at once; the sink may still be entered from the
  // caller's thread above, so its own locking is what keeps its state.
  backend_.Run(
      requests, [&](size_t i, SampleResponse resp) { Answer((*batches)[i], resp, sink, &result); },
      cancel);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace evald
