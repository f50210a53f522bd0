#include "kernels/generate/teacher_forcing.h"

#include <algorithm>

#include "kernels/generate/token_logprobs.h"
#include "kernels/model/memory_plan.h"
#include "kernels/ops/kernel_table.h"

namespace evald::kernels {

namespace {

// logits -> log-softmax, in place (the normaliser the generator's log-probs use too).
void LogSoftmax(std::vector<float>& v) {
  const double norm = LogSumExp(v.data(), static_cast<int>(v.size()));
  for (float& x : v) x = static_cast<float>(x - norm);
}

}  // namespace

Status ForEachNextTokenLogprobs(const LlamaModel& model, const std::vector<int>& tokens,
                                size_t first,
                                const std::function<void(size_t, std::span<const float>)>& visit,
                                Isa isa) {
  if (first < 1 || first > tokens.size())
    return Status::InvalidArgument("the scored tokens must start after the first token");
  if (static_cast<int64_t>(tokens.size()) > model.config().context)
    return Status::InvalidArgument("the text of " + std::to_string(tokens.size()) +
                                   " tokens does not fit the context of " +
                                   std::to_string(model.config().context));
  if (!IsaSupported(isa)) return Status::InvalidArgument("this CPU cannot run that ISA");
  const int vocab = model.config().vocab;
  auto opened = OpenSession(model, static_cast<int>(tokens.size()), KernelTable::For(isa), 1,
                            nullptr, KvCacheType::kF32, 0);
  if (!opened.ok()) return opened.status();
  LlamaSession& session = **opened;
  // Everything before the last unscored token in chunks: its logits are not needed.
  const size_t context = first - 1;
  for (size_t i = 0; i < context; i += LlamaSession::kPrefillChunk) {
    const int chunk = static_cast<int>(std::min<size_t>(LlamaSession::kPrefillChunk, context - i));
    auto l = session.Prefill(tokens.data() + i, chunk, static_cast<int>(i));
    if (!l.ok()) return l.status();
  }
  std::vector<float> logprobs(static_cast<size_t>(vocab));
  // Feeding token t gives the distribution of token t + 1: the scored part in prefill chunks
  // too, every token's logits kept (each weight matrix streamed once per chunk).
  for (size_t t = context; t + 1 < tokens.size(); t += LlamaSession::kPrefillChunk) {
    const int chunk =
        static_cast<int>(std::min<size_t>(LlamaSession::kPrefillChunk, tokens.size() - 1 - t));
    auto l = session.PrefillAllLogits(tokens.data() + t, chunk, static_cast<int>(t));
    if (!l.ok()) return l.status();
    for (int s = 0; s < chunk; ++s) {
      const float* row = *l + static_cast<size_t>(s) * vocab;
      logprobs.assign(row, row + vocab);
      LogSoftmax(logprobs);
      visit(t + static_cast<size_t>(s) + 1, logprobs);
    }
  }
  return Status::Ok();
}

}  // namespace evald::kernels
