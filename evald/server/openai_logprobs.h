// Log-probs on evald's OpenAI-compatible endpoints, in each API's own shape: /v1/completions
// takes `logprobs: K` and answers with parallel lists; /v1/chat/completions takes
// `logprobs: true` with `top_logprobs: K` and answers with one entry per token (as OpenAI's
// and vLLM's servers do). The values are the model's own distribution (kernels/generate/
// token_logprobs.h).
#pragma once

#include <functional>
#include <span>
#include <string>

#include "base/status.h"
#include "evald/proto/openai.pb.h"
#include "kernels/generate/token_logprobs.h"

namespace evald {

// -1 when the request asks for no log-probs, else K; InvalidArgument for a value of the wrong
// type or range, or a field of the other API.
StatusOr<int> RequestedLogprobs(const openai::CompletionRequest& request, bool chat);

// Appends `steps` to `out`; `text_offset` is where the first step's token starts in the sample's
// generated text, advanced past every token appended.
void AppendLogprobs(bool chat, std::span<const kernels::StepLogprobs> steps,
                    const std::function<std::string(int token)>& piece, int* text_offset,
                    openai::ChoiceLogprobs* out);

}  // namespace evald
