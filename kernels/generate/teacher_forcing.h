// A model's distribution over the next token at every position of a given text (teacher
// forcing: the text's own tokens are fed whatever the model would have chosen), the input of
// distribution-drift measures between two weight files of one checkpoint.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "base/status.h"
#include "kernels/model/llama_model.h"
#include "kernels/ops/isa.h"

namespace evald::kernels {

// Calls visit(t, logprobs) for every t in [first, tokens.size()) with the log-probabilities
// (over the vocabulary) of the token at t given tokens [0, t). Everything runs in prefill chunks
// (the scored part keeping every token's logits), bit-identical to one decode step per token.
// first >= 1.
Status ForEachNextTokenLogprobs(const LlamaModel& model, const std::vector<int>& tokens,
                                size_t first,
                                const std::function<void(size_t, std::span<const float>)>& visit,
                                Isa isa = DetectIsa());

}  // namespace evald::kernels
