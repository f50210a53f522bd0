#include "kernels/generate/generator.h"

namespace evald::kernels {

StatusOr<std::vector<Completion>> Generate(const LlamaModel& model, const SpmTokenizer& tokenizer,
                                           const std::string& prompt,
                                           const GenerateOptions& options, Isa isa) {
  if (options.n < 1 || options.n > 1024)
    return Status::InvalidArgument("n must be between 1 and 1024");
  if (options.max_tokens < 0) return Status::InvalidArgument("max_tokens must not be negative");
  std::vector<int> prompt_tokens = tokenizer.Encode(prompt, tokenizer.add_bos());
  if (prompt_tokens.empty()) return Status::InvalidArgument("empty prompt");
  const int context = model.config().context;
  if (static_cast<int>(prompt_tokens.size()) >= context)
    return Status::InvalidArgument("prompt of " + std::to_string(prompt_tokens.size()) +
                                   " tokens does not fit the context of " +
                                   std::to_string(context));
  const int max_positions =
      std::min<int>(context, static_cast<int>(prompt_tokens.size()) + options.max_tokens);
  std::vector<Completion> out;
  for (int s = 0; s < options.n; ++s) {
    LlamaSession session(model, max_positions, isa);
    Sampler sampler(options.sampling, options.seed + static_cast<uint64_t>(s));
    Completion c;
    c.prompt_tokens = static_cast<int>(prompt_tokens.size());
    const float* logits = nullptr;
    for (size_t i = 0; i < prompt_tokens.size(); ++i) {
      auto l = session.Forward(prompt_tokens[i], static_cast<int>(i));
      if (!l.ok()) return l.status();
      logits = *l;
    }
    c.finish_reason = "length";
    int pos = static_cast<int>(prompt_tokens.size());
    while (static_cast<int>(c.tokens.size()) < options.max_tokens && pos < max_positions) {
      int next = sampler.Sample(logits, model.config().vocab);
      if (next == tokenizer.eos()) {
        c.finish_reason = "stop";
        break;
      }
      c.tokens.push_back(next);
      c.text += tokenizer.Piece(next);
      bool stopped = false;
      for (const auto& stop : options.stop) {
        size_t at = stop.empty() ? std::string::npos : c.text.find(stop);
        if (at != std::string::npos) {
          c.text.resize(at);
          stopped = true;
        }
      }
      if (stopped) {
        c.finish_reason = "stop";
        break;
      }
      if (pos + 1 >= max_positions) break;
      auto l = session.Forward(next, pos++);
      if (!l.ok()) return l.status();
      logits = *l;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace evald::kernels
