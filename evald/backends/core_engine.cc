#include "evald/backends/core_engine.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "base/clock.h"
#include "base/utf8.h"

namespace evald {

namespace {

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

StatusOr<std::unique_ptr<CoreEngine>> CoreEngine::Load(const std::string& path,
                                                       const Options& options) {
  const int threads = options.threads;
  const kernels::KvCacheType kv = options.kv;
  if (threads < 1 || threads > 256) return Status::InvalidArgument("threads must be 1..256");
  if (!options.chat_format.empty()) {
    auto named = kernels::ChatFormatNamed(options.chat_format);
    if (!named.ok()) return named.status();
  }
  auto model = kernels::LlamaModel::Load(path);
  if (!model.ok()) return model.status().Annotate("loading " + path);
  EVALD_RETURN_IF_ERROR(kernels::CheckKvCacheType((*model)->config(), kv).Annotate(path));
  auto tok = kernels::LoadTokenizer((*model)->file());
  if (!tok.ok()) return tok.status().Annotate("tokenizer of " + path);
  auto engine = std::unique_ptr<CoreEngine>(new CoreEngine);
  engine->path_ = path;
  engine->name_ = (*model)->file().GetString("general.name").value_or("");
  if (engine->name_.empty()) engine->name_ = std::filesystem::path(path).stem().string();
  engine->name_ = SanitizeUtf8(engine->name_);
  engine->threads_ = threads;
  engine->kv_ = kv;
  engine->memory_budget_ = options.memory_budget;
  engine->model_ = std::move(*model);
  engine->tokenizer_ = std::move(*tok);
  // Kept whatever it says: a file whose template cannot be rendered still serves completions,
  // and each chat request gets the reason.
  engine->chat_ = kernels::ChatRenderer::ForFile(
      engine->model_->file().GetString("tokenizer.chat_template"), options.chat_format, path);
  return engine;
}

StatusOr<std::string> CoreEngine::ChatFormatInUse() const {
  if (!chat_.ok()) return chat_.status();
  return chat_->description();
}

StatusOr<std::string> CoreEngine::PromptText(const CoreRequest& request) const {
  if (request.messages.empty()) return request.prompt;
  if (!chat_.ok()) return Status::InvalidArgument(chat_.status().message());
  return chat_->Render(request.messages, tokenizer_->bos_text(), kernels::EosText(*tokenizer_));
}

StatusOr<std::vector<int>> CoreEngine::PromptTokens(const CoreRequest& request,
                                                    const std::string& text) const {
  if (request.messages.empty()) return tokenizer_->Encode(text, tokenizer_->add_bos());
  return kernels::ChatPromptTokens(*tokenizer_, text);
}

StatusOr<CoreResult> CoreEngine::Generate(const CoreRequest& request, const OnText& on_text) {
  MutexLock lock(mu_);
  const auto t0 = std::chrono::steady_clock::now();
  CoreResult result;
  result.timing.set_start_unix_ms(UnixMillis());
  result.timing.set_ttft_ms(-1);
  result.timing.set_streamed(true);
  result.timing.set_attempts(1);
  result.timing.set_samples(request.n);

  // A stop string can still remove the last (longest stop - 1) bytes; hold them back.
  size_t holdback = 0;
  for (const auto& s : request.stop) holdback = std::max(holdback, s.empty() ? 0 : s.size() - 1);
  std::vector<size_t> emitted(static_cast<size_t>(std::max(request.n, 0)), 0);
  // Per sample: tokens whose log-probs went out, and the text bytes those tokens cover.
  std::vector<size_t> tokens_out(emitted.size(), 0), token_bytes(emitted.size(), 0);
  double last_step_ms = -1;
  int last_step_tokens = -1;

  kernels::GenerateOptions o;
  o.n = request.n;
  o.max_tokens = request.max_tokens;
  o.seed = request.seed;
  o.sampling = request.sampling;
  o.stop = request.stop;
  o.threads = threads_;
  o.kv_cache = kv_;
  o.memory_budget = memory_budget_;
  o.logprobs = request.logprobs;
  if (!request.messages.empty() && chat_.ok()) o.end_tokens = chat_->EndOfTurnTokens(*tokenizer_);
  o.on_update = [&](int s, const kernels::Completion& c, bool finished) {
    // Decode steps advance all samples together: a step is marked by the first sample whose
    // token count moves past the previous step's.
    const int tokens = static_cast<int>(c.tokens.size());
    if (tokens > last_step_tokens && tokens > 0) {
      double now = MsSince(t0);
      if (last_step_ms >= 0) result.timing.add_itl_ms(static_cast<float>(now - last_step_ms));
      if (result.timing.ttft_ms() < 0) result.timing.set_ttft_ms(now);
      last_step_ms = now;
      last_step_tokens = tokens;
    }
    if (!on_text) return true;
    size_t limit =
        finished ? c.text.size() : (c.text.size() > holdback ? c.text.size() - holdback : 0);
    if (!finished) limit = Utf8SafeCut(c.text, limit);
    size_t& from = emitted[static_cast<size_t>(s)];
    std::string delta;
    if (limit > from) {
      delta = c.text.substr(from, limit - from);
      from = limit;
    }
    delta = SanitizeUtf8(delta);
    // The tokens whose text lies wholly inside what is out (all of them once finished).
    size_t& sent = tokens_out[static_cast<size_t>(s)];
    const size_t first = sent;
    while (sent < c.logprobs.size()) {
      size_t end = token_bytes[static_cast<size_t>(s)] + tokenizer_->Piece(c.tokens[sent]).size();
      if (!finished && end > from) break;
      token_bytes[static_cast<size_t>(s)] = end;
      ++sent;
    }
    if (delta.empty() && !finished && sent == first) return true;
    return on_text(s, delta, finished ? c.finish_reason.c_str() : nullptr,
                   std::span<const kernels::StepLogprobs>(c.logprobs).subspan(first, sent - first));
  };
  auto prompt_text = PromptText(request);
  if (!prompt_text.ok()) return prompt_text.status();
  auto prompt_tokens = PromptTokens(request, *prompt_text);
  if (!prompt_tokens.ok()) return prompt_tokens.status();
  result.prompt_text = std::move(*prompt_text);
  auto out = kernels::GenerateFromTokens(*model_, *tokenizer_, *prompt_tokens, o);
  if (!out.ok()) return out.status();
  result.completions = std::move(*out);
  int completion_tokens = 0;
  for (auto& c : result.completions) {
    c.text = SanitizeUtf8(c.text);
    completion_tokens += static_cast<int>(c.tokens.size());
    result.prompt_tokens = c.prompt_tokens;
  }
  result.timing.set_e2e_ms(MsSince(t0));
  if (result.timing.ttft_ms() < 0) result.timing.set_ttft_ms(result.timing.e2e_ms());
  result.timing.set_prompt_tokens(result.prompt_tokens);
  result.timing.set_completion_tokens(completion_tokens);
  result.timing.set_usage_reported(true);
  return result;
}

}  // namespace evald
