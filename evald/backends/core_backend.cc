#include "evald/backends/core_backend.h"

#include "base/utf8.h"

namespace evald {

kernels::SamplingOptions CoreSamplingOptions(const SamplingSettings& s) {
  kernels::SamplingOptions o;
  o.temperature = static_cast<float>(s.temperature);
  o.top_k = s.top_k > 0 ? s.top_k : 0;
  o.top_p = static_cast<float>(s.top_p);
  o.min_p = static_cast<float>(s.min_p);
  return o;
}

CoreRequest CoreRequestFor(const SampleRequest& r, bool chat) {
  CoreRequest cr;
  if (chat) {
    cr.messages = kernels::SystemAndUserTurns(r.system, r.user);
  } else {
    cr.prompt = CompletionPromptText(r.system, r.user);
  }
  cr.n = r.n;
  cr.max_tokens = r.sampling.max_tokens;
  cr.seed = r.seed;
  cr.sampling = CoreSamplingOptions(r.sampling);
  cr.stop = r.sampling.stop;
  return cr;
}

std::string CoreBackend::PromptFormat() const {
  if (!chat_) return "completions";
  auto format = engine_->ChatFormatInUse();
  return "chat: " + (format.ok() ? *format : format.status().message());
}

void CoreBackend::Run(const std::vector<SampleRequest>& requests,
                      const std::function<void(size_t, SampleResponse)>& done,
                      const CancelToken& cancel) {
  AnswerInTurn(requests, done, cancel, [&](const SampleRequest& r) {
    SampleResponse resp;
    auto out = engine_->Generate(CoreRequestFor(r, chat_), [&](int, std::string_view, const char*,
                                                               auto) { return !cancel.stopped(); });
    if (!out.ok()) {
      resp.status = out.status();
      return resp;
    }
    for (auto& c : out->completions) {
      GeneratedSample s;
      s.text = std::move(c.text);
      s.finish_reason = c.finish_reason;
      s.completion_tokens = static_cast<int>(c.tokens.size());
      if (chat_)
        s.rendered_prompt = SanitizeUtf8(out->prompt_text);  // a template's bytes may not be UTF-8
      resp.samples.push_back(std::move(s));
    }
    resp.timing = std::move(out->timing);
    return resp;
  });
}

}  // namespace evald
