// Completions from a local checkpoint: prompt -> tokens -> decode with sampling until EOS, a
// stop string or max_tokens. Sample i uses seed + i.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "kernels/generate/sampler.h"
#include "kernels/generate/token_logprobs.h"
#include "kernels/model/llama_model.h"
#include "kernels/tokenizer/tokenizer.h"

namespace evald::kernels {

struct Completion;

// What a Generate call computed: sample-steps (a running sample's decode step) against the
// vectors computed for them (fewer where samples with the same tokens so far ran as one).
struct GenerateStats {
  int64_t sample_steps = 0;
  int64_t vectors = 0;
};

struct GenerateOptions {
  int n = 1;
  int max_tokens = 256;
  uint64_t seed = 0;
  SamplingOptions sampling;
  std::vector<std::string> stop;
  int threads = 1;        // matrix rows split over this many threads (a non-spinning pool)
  Isa isa = DetectIsa();  // whose kernels the session picks (kernel_table.h), once
  KvCacheType kv_cache = KvCacheType::kF32;  // q8_0: a quarter of the memory (see LlamaSession)
  // Bytes the n samples may hold in KV cache and scratch once all reach max_tokens; more is
  // refused (ResourceExhausted) before anything runs. 0: the memory available when it starts.
  int64_t memory_budget = 0;
  // Tokens that end a sample as EOS does (a chat format's end of turn); not part of the text.
  std::vector<int> end_tokens;
  // -1: no log-probs; K >= 0: each generated token's log-prob and the K likeliest tokens' at
  // that step (Completion::logprobs).
  int logprobs = -1;
  // Called each time sample `sample` gains a token and once when it finishes (finished = true,
  // text final); streaming servers and latency measurements hang off it. Returning false
  // cancels the whole generation (Generate then fails with kCancelled).
  std::function<bool(int sample, const Completion& completion, bool finished)> on_update;
  // Samples that have drawn the same tokens so far are computed once (SampleGroups; the same
  // results bit for bit). false: every running sample is a vector of each step (benchmarks of
  // the batch itself).
  bool merge_identical_samples = true;
  // Where set, the call adds what it computed (GenerateStats).
  GenerateStats* stats = nullptr;
};

struct Completion {
  std::string text;
  std::vector<int> tokens;
  int prompt_tokens = 0;
  std::string finish_reason;           // "stop" (EOS or a stop string) or "length"
  std::vector<StepLogprobs> logprobs;  // one per entry of `tokens`, when asked for
};

// `prompt` as plain text (Tokenizer::Encode, with the vocabulary's BOS convention).
StatusOr<std::vector<Completion>> Generate(const LlamaModel& model, const Tokenizer& tokenizer,
                                           const std::string& prompt,
                                           const GenerateOptions& options);
// A prompt tokenized by the caller (a rendered chat, special tokens parsed).
StatusOr<std::vector<Completion>> GenerateFromTokens(const LlamaModel& model,
                                                     const Tokenizer& tokenizer,
                                                     const std::vector<int>& prompt_tokens,
                                                     const GenerateOptions& options);

}  // namespace evald::kernels
