// Log-probabilities of a decode step: the chosen token's and the K likeliest tokens', from the
// model's own distribution (log-softmax of the raw logits, before temperature and the sampler's
// cuts), as vLLM reports them by default and llama.cpp's n_probs compares against.
#pragma once

#include <vector>

namespace evald::kernels {

// The most top tokens a step reports (vLLM's default max_logprobs; OpenAI's chat allows 20).
inline constexpr int kMaxTopLogprobs = 20;

struct TokenLogprob {
  int token = -1;
  float logprob = 0;
};

struct StepLogprobs {
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;  // the `top` likeliest, likeliest first (ties: lower id first)
};

// log(sum(exp(logits))), shifted by the maximum so that no term overflows: the normaliser of a
// log-softmax (every log-prob is logit - LogSumExp).
double LogSumExp(const float* logits, int vocab);

// One pass for the normaliser and one partial selection for the top tokens: O(vocab + top *
// log(top)) per step. `top` is clamped to 0..vocab.
StepLogprobs LogprobsOf(const float* logits, int vocab, int chosen, int top);

}  // namespace evald::kernels
