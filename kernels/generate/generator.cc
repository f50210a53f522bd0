#include "kernels/generate/generator.h"

#include <algorithm>
#include <memory>

#include "kernels/generate/sample_groups.h"
#include "kernels/model/memory_plan.h"
#include "kernels/ops/thread_pool.h"

namespace evald::kernels {

StatusOr<std::vector<Completion>> Generate(const LlamaModel& model, const Tokenizer& tokenizer,
                                           const std::string& prompt,
                                           const GenerateOptions& options) {
  return GenerateFromTokens(model, tokenizer, tokenizer.Encode(prompt, tokenizer.add_bos()),
                            options);
}

namespace {

Status CheckOptions(const GenerateOptions& options, size_t prompt, int context) {
  if (options.n < 1 || options.n > 1024)
    return Status::InvalidArgument("n must be between 1 and 1024");
  if (options.max_tokens < 0) return Status::InvalidArgument("max_tokens must not be negative");
  if (options.logprobs < -1 || options.logprobs > kMaxTopLogprobs)
    return Status::InvalidArgument("logprobs must be -1.." + std::to_string(kMaxTopLogprobs));
  if (options.threads < 1 || options.threads > 256)
    return Status::InvalidArgument("threads must be 1..256");
  if (options.memory_budget < 0) return Status::InvalidArgument("memory_budget must be >= 0");
  if (prompt == 0) return Status::InvalidArgument("empty prompt");
  if (prompt >= static_cast<size_t>(context))
    return Status::InvalidArgument("prompt of " + std::to_string(prompt) +
                                   " tokens does not fit the context of " +
                                   std::to_string(context));
  if (!IsaSupported(options.isa))
    return Status::InvalidArgument(std::string("this CPU cannot run ") + IsaName(options.isa));
  return Status::Ok();
}

// The n samples of one prompt, prefilled on sequence 0 and decoding together: each sample's
// sampler, completion and state, and which sequences compute them (SampleGroups).
class SampleRun {
 public:
  SampleRun(const Tokenizer& tokenizer, const GenerateOptions& options, LlamaSession& session,
            ThreadPool* pool, int prompt_size, int vocab)
      : tokenizer_(tokenizer),
        options_(options),
        session_(session),
        pool_(pool),
        prompt_size_(prompt_size),
        vocab_(vocab),
        out_(static_cast<size_t>(options.n)),
        next_(static_cast<size_t>(options.n)),
        done_(static_cast<size_t>(options.n), false),
        pending_(options.logprobs >= 0 ? static_cast<size_t>(options.n) : 0),
        groups_(options.n, options.merge_identical_samples) {}

  // Each sample's first token, drawn from the prompt's logits.
  void Start(const float* prompt_logits) {
    for (int s = 0; s < options_.n; ++s) {
      samplers_.emplace_back(options_.sampling, options_.seed + static_cast<uint64_t>(s),
                             KernelTable::For(options_.isa).softmax_weights);
      out_[s].prompt_tokens = prompt_size_;
      out_[s].finish_reason = "length";
      Draw(s, prompt_logits);
    }
  }
  // Every running sample's drawn token joins its completion or ends it (EOS, an end token, a
  // stop string, max_tokens). Whether any sample goes on; kCancelled if the caller cancelled.
  StatusOr<bool> TakeTokens() {
    bool any = false;
    for (int s = 0; s < options_.n; ++s) {
      if (done_[s]) continue;
      if (EndsTheSample(next_[s])) {
        out_[s].finish_reason = "stop";
        done_[s] = true;
      } else {
        Append(s);
      }
      if (!Notify(s, done_[s])) return Cancelled();
      any = any || !done_[s];
    }
    return any;
  }
  // One decode step at `pos` for the samples still running, each group of samples with the same
  // tokens so far as one vector; then every running sample draws its next token.
  Status Step(int pos) {
    groups_.Next(next_, done_, &plan_);
    for (const auto& [from, to] : plan_.copies)
      EVALD_RETURN_IF_ERROR(session_.CopySequence(from, to, prompt_size_, pos));
    const int count = static_cast<int>(plan_.sequences.size());
    auto logits =
        session_.ForwardSequences(plan_.tokens.data(), plan_.sequences.data(), count, pos);
    if (!logits.ok()) return logits.status();
    running_.clear();
    for (int s = 0; s < options_.n; ++s)
      if (!done_[s]) running_.push_back(s);
    if (options_.stats) {
      options_.stats->sample_steps += static_cast<int64_t>(running_.size());
      options_.stats->vectors += count;
    }
    // Each sample draws from its own sampler: split across the pool, the same tokens.
    auto sample = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = running_[static_cast<size_t>(i)];
        Draw(s, *logits + static_cast<size_t>(plan_.vector_of[s]) * vocab_);
      }
    };
    if (pool_) {
      pool_->ParallelFor(static_cast<int64_t>(running_.size()), sample);
    } else {
      sample(0, static_cast<int64_t>(running_.size()));
    }
    return Status::Ok();
  }
  // Samples cut by the context (or max_tokens = 0) end here.
  StatusOr<std::vector<Completion>> Finish() {
    for (int s = 0; s < options_.n; ++s)
      if (!done_[s] && !Notify(s, true)) return Cancelled();
    return std::move(out_);
  }

 private:
  static Status Cancelled() { return Status::Cancelled("generation cancelled"); }
  void Draw(int s, const float* logits) {
    next_[s] = samplers_[s].Sample(logits, vocab_);
    if (!pending_.empty()) pending_[s] = LogprobsOf(logits, vocab_, next_[s], options_.logprobs);
  }
  bool EndsTheSample(int token) const {
    const auto& end = options_.end_tokens;
    return token == tokenizer_.eos() || std::find(end.begin(), end.end(), token) != end.end();
  }
  // The drawn token joins sample s's text; a stop string in it or max_tokens ends the sample.
  void Append(int s) {
    Completion& c = out_[s];
    c.tokens.push_back(next_[s]);
    if (!pending_.empty()) c.logprobs.push_back(std::move(pending_[s]));
    c.text += tokenizer_.Piece(next_[s]);
    for (const auto& stop : options_.stop) {
      size_t at = stop.empty() ? std::string::npos : c.text.find(stop);
      if (at != std::string::npos) {
        c.text.resize(at);
        c.finish_reason = "stop";
        done_[s] = true;
      }
    }
    if (static_cast<int>(c.tokens.size()) >= options_.max_tokens) done_[s] = true;
  }
  bool Notify(int s, bool finished) {
    return !options_.on_update || options_.on_update(s, out_[s], finished);
  }

  const Tokenizer& tokenizer_;
  const GenerateOptions& options_;
  LlamaSession& session_;
  ThreadPool* pool_;
  const int prompt_size_, vocab_;
  std::vector<Completion> out_;
  std::vector<Sampler> samplers_;
  std::vector<int> next_, running_;
  std::vector<bool> done_;
  // The log-probs of next_[s], kept until the token joins the text (EOS never does).
  std::vector<StepLogprobs> pending_;
  SampleGroups groups_;
  GroupStep plan_;
};

}  // namespace

StatusOr<std::vector<Completion>> GenerateFromTokens(const LlamaModel& model,
                                                     const Tokenizer& tokenizer,
                                                     const std::vector<int>& prompt_tokens,
                                                     const GenerateOptions& options) {
  const int context = model.config().context;
  EVALD_RETURN_IF_ERROR(CheckOptions(options, prompt_tokens.size(), context));
  EVALD_RETURN_IF_ERROR(CheckKvCacheType(model.config(), options.kv_cache));
  const int prompt_size = static_cast<int>(prompt_tokens.size());
  const int max_positions = std::min<int>(context, prompt_size + options.max_tokens);
  std::unique_ptr<ThreadPool> pool;
  if (options.threads > 1) pool = std::make_unique<ThreadPool>(options.threads);
  // Refused here if the n samples could outgrow the memory (or the budget) before they end.
  auto opened = OpenSession(model, max_positions, KernelTable::For(options.isa), options.n,
                            pool.get(), options.kv_cache, prompt_size, options.memory_budget);
  if (!opened.ok()) return opened.status();
  LlamaSession& session = **opened;
  // One prefill on sequence 0, shared by all n samples, in chunks: each weight matrix streamed
  // once per chunk, not once per token. Then the n samples decode together.
  const float* logits = nullptr;
  for (int i = 0; i < prompt_size; i += LlamaSession::kPrefillChunk) {
    const int chunk = std::min(LlamaSession::kPrefillChunk, prompt_size - i);
    auto l = session.Prefill(prompt_tokens.data() + i, chunk, i);
    if (!l.ok()) return l.status();
    logits = *l;
  }
  session.ShareFirstSequence(prompt_size);
  SampleRun run(tokenizer, options, session, pool.get(), prompt_size, model.config().vocab);
  run.Start(logits);
  for (int pos = prompt_size, step = 0; step < options.max_tokens && pos < max_positions; ++step) {
    auto any = run.TakeTokens();
    if (!any.ok()) return any.status();
    if (!*any || pos + 1 >= max_positions) break;
    EVALD_RETURN_IF_ERROR(run.Step(pos++));
  }
  return run.Finish();
}

}  // namespace evald::kernels
