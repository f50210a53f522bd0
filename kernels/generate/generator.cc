#include "kernels/generate/generator.h"

#include <algorithm>
#include <memory>

#include "kernels/model/memory_plan.h"
#include "kernels/ops/thread_pool.h"

namespace evald::kernels {

StatusOr<std::vector<Completion>> Generate(const LlamaModel& model, const Tokenizer& tokenizer,
                                           const std::string& prompt,
                                           const GenerateOptions& options) {
  return GenerateFromTokens(model, tokenizer, tokenizer.Encode(prompt, tokenizer.add_bos()),
                            options);
}

StatusOr<std::vector<Completion>> GenerateFromTokens(const LlamaModel& model,
                                                     const Tokenizer& tokenizer,
                                                     const std::vector<int>& prompt_tokens,
                                                     const GenerateOptions& options) {
  if (options.n < 1 || options.n > 1024)
    return Status::InvalidArgument("n must be between 1 and 1024");
  if (options.max_tokens < 0) return Status::InvalidArgument("max_tokens must not be negative");
  if (options.logprobs < -1 || options.logprobs > kMaxTopLogprobs)
    return Status::InvalidArgument("logprobs must be -1.." + std::to_string(kMaxTopLogprobs));
  if (options.threads < 1 || options.threads > 256)
    return Status::InvalidArgument("threads must be 1..256");
  if (options.memory_budget < 0) return Status::InvalidArgument("memory_budget must be >= 0");
  if (prompt_tokens.empty()) return Status::InvalidArgument("empty prompt");
  const int context = model.config().context;
  if (static_cast<int>(prompt_tokens.size()) >= context)
    return Status::InvalidArgument("prompt of " + std::to_string(prompt_tokens.size()) +
                                   " tokens does not fit the context of " +
                                   std::to_string(context));
  const int max_positions =
      std::min<int>(context, static_cast<int>(prompt_tokens.size()) + options.max_tokens);
  const int n = options.n, vocab = model.config().vocab;
  // One prefill on sequence 0, shared by all n samples; then the n samples decode together.
  std::unique_ptr<ThreadPool> pool;
  if (options.threads > 1) pool = std::make_unique<ThreadPool>(options.threads);
  EVALD_RETURN_IF_ERROR(CheckKvCacheType(model.config(), options.kv_cache));
  if (!IsaSupported(options.isa))
    return Status::InvalidArgument(std::string("this CPU cannot run ") + IsaName(options.isa));
  // Refused here if the n samples could outgrow the memory (or the budget) before they end.
  auto opened =
      OpenSession(model, max_positions, KernelTable::For(options.isa), n, pool.get(),
                  options.kv_cache, static_cast<int>(prompt_tokens.size()), options.memory_budget);
  if (!opened.ok()) return opened.status();
  LlamaSession& session = **opened;
  const float* logits = nullptr;
  // The prompt in chunks: each weight matrix streamed once per chunk, not once per token.
  for (size_t i = 0; i < prompt_tokens.size(); i += LlamaSession::kPrefillChunk) {
    const int chunk =
        static_cast<int>(std::min<size_t>(LlamaSession::kPrefillChunk, prompt_tokens.size() - i));
    auto l = session.Prefill(prompt_tokens.data() + i, chunk, static_cast<int>(i));
    if (!l.ok()) return l.status();
    logits = *l;
  }
  session.ShareFirstSequence(static_cast<int>(prompt_tokens.size()));
  std::vector<float> prompt_logits(logits, logits + vocab);

  std::vector<Completion> out(static_cast<size_t>(n));
  std::vector<Sampler> samplers;
  std::vector<int> next(static_cast<size_t>(n)), feed, running;  // feed[i]: sample running[i]'s
  std::vector<bool> done(static_cast<size_t>(n), false);
  // The log-probs of next[s], kept until the token joins the text (EOS never does).
  std::vector<StepLogprobs> pending(options.logprobs >= 0 ? static_cast<size_t>(n) : 0);
  auto draw = [&](int s, const float* step_logits) {
    next[s] = samplers[s].Sample(step_logits, vocab);
    if (!pending.empty()) pending[s] = LogprobsOf(step_logits, vocab, next[s], options.logprobs);
  };
  for (int s = 0; s < n; ++s) {
    samplers.emplace_back(options.sampling, options.seed + static_cast<uint64_t>(s),
                          KernelTable::For(options.isa).softmax_weights);
    out[s].prompt_tokens = static_cast<int>(prompt_tokens.size());
    out[s].finish_reason = "length";
    draw(s, prompt_logits.data());
  }
  int pos = static_cast<int>(prompt_tokens.size());
  auto notify = [&](int s, bool finished) {
    return !options.on_update || options.on_update(s, out[s], finished);
  };
  auto cancelled = [] { return Status::Cancelled("generation cancelled"); };
  for (int step = 0; step < options.max_tokens && pos < max_positions; ++step) {
    bool any = false;
    for (int s = 0; s < n; ++s) {
      if (done[s]) continue;
      Completion& c = out[s];
      if (next[s] == tokenizer.eos() ||
          std::find(options.end_tokens.begin(), options.end_tokens.end(), next[s]) !=
              options.end_tokens.end()) {
        c.finish_reason = "stop";
        done[s] = true;
        if (!notify(s, true)) return cancelled();
        continue;
      }
      c.tokens.push_back(next[s]);
      if (!pending.empty()) c.logprobs.push_back(std::move(pending[s]));
      c.text += tokenizer.Piece(next[s]);
      for (const auto& stop : options.stop) {
        size_t at = stop.empty() ? std::string::npos : c.text.find(stop);
        if (at != std::string::npos) {
          c.text.resize(at);
          c.finish_reason = "stop";
          done[s] = true;
        }
      }
      if (static_cast<int>(c.tokens.size()) >= options.max_tokens) done[s] = true;
      if (!notify(s, done[s])) return cancelled();
      any = any || !done[s];
    }
    if (!any || pos + 1 >= max_positions) break;
    // Only the samples still running: a finished one costs nothing more.
    running.clear();
    feed.clear();
    for (int s = 0; s < n; ++s)
      if (!done[s]) {
        running.push_back(s);
        feed.push_back(next[s]);
      }
    const int count = static_cast<int>(running.size());
    auto l = session.ForwardSequences(feed.data(), running.data(), count, pos++);
    if (!l.ok()) return l.status();
    // Each sample draws from its own sampler: split across the pool, the same tokens.
    auto sample = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        draw(running[static_cast<size_t>(i)], *l + static_cast<size_t>(i) * vocab);
    };
    if (pool) {
      pool->ParallelFor(count, sample);
    } else {
      sample(0, count);
    }
  }
  // Samples cut by the context (or max_tokens = 0) end here.
  for (int s = 0; s < n; ++s)
    if (!done[s] && !notify(s, true)) return cancelled();
  return out;
}

}  // namespace evald::kernels
