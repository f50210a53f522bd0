#include "evald/server/openai_logprobs.h"

#include <cmath>

#include "base/utf8.h"

namespace evald {

namespace {

using google::protobuf::Value;

StatusOr<int> TopCount(double k, const char* field) {
  if (!(k >= 0 && k <= kernels::kMaxTopLogprobs) || k != std::floor(k))
    return Status::InvalidArgument(std::string(field) + " must be an integer 0.." +
                                   std::to_string(kernels::kMaxTopLogprobs));
  return static_cast<int>(k);
}

StatusOr<int> ChatLogprobs(const openai::CompletionRequest& r) {
  const Value& v = r.logprobs();
  const bool on = v.kind_case() == Value::kBoolValue && v.bool_value();
  if (v.kind_case() != Value::kBoolValue && v.kind_case() != Value::kNullValue &&
      v.kind_case() != Value::KIND_NOT_SET)
    return Status::InvalidArgument(
        "logprobs is true or false on /v1/chat/completions (top_logprobs says how many)");
  if (!r.has_top_logprobs()) return on ? 0 : -1;
  if (!on) return Status::InvalidArgument("top_logprobs needs logprobs: true");
  return TopCount(r.top_logprobs(), "top_logprobs");
}

StatusOr<int> CompletionLogprobs(const openai::CompletionRequest& r) {
  if (r.has_top_logprobs())
    return Status::InvalidArgument(
        "top_logprobs belongs to /v1/chat/completions; /v1/completions takes logprobs: K");
  const Value& v = r.logprobs();
  if (v.kind_case() == Value::kNullValue || v.kind_case() == Value::KIND_NOT_SET) return -1;
  if (v.kind_case() != Value::kNumberValue)
    return Status::InvalidArgument("logprobs is an integer on /v1/completions");
  return TopCount(v.number_value(), "logprobs");
}

void AddBytes(const std::string& piece, google::protobuf::RepeatedField<int32_t>* bytes) {
  for (unsigned char c : piece) bytes->Add(c);
}

// `text`: the chosen token's piece.
void AppendChatStep(const kernels::StepLogprobs& step, const std::string& text,
                    const std::function<std::string(int)>& piece, openai::ChoiceLogprobs* out) {
  auto* entry = out->add_content();
  entry->set_token(SanitizeUtf8(text));
  entry->set_logprob(step.chosen.logprob);
  AddBytes(text, entry->mutable_bytes());
  for (const auto& t : step.top) {
    auto* top = entry->add_top_logprobs();
    const std::string top_text = piece(t.token);
    top->set_token(SanitizeUtf8(top_text));
    top->set_logprob(t.logprob);
    AddBytes(top_text, top->mutable_bytes());
  }
}

void AppendCompletionStep(const kernels::StepLogprobs& step, const std::string& text,
                          const std::function<std::string(int)>& piece, int offset,
                          openai::ChoiceLogprobs* out) {
  out->add_tokens(SanitizeUtf8(text));
  out->add_token_logprobs(step.chosen.logprob);
  out->add_text_offset(offset);
  auto* top = out->add_top_logprobs()->mutable_fields();
  for (const auto& t : step.top) {
    // Tokens with the same text share a key, as in vLLM's answer; the likelier one stays.
    const std::string key = SanitizeUtf8(piece(t.token));
    if (top->find(key) == top->end()) (*top)[key].set_number_value(t.logprob);
  }
}

}  // namespace

StatusOr<int> RequestedLogprobs(const openai::CompletionRequest& request, bool chat) {
  return chat ? ChatLogprobs(request) : CompletionLogprobs(request);
}

void AppendLogprobs(bool chat, std::span<const kernels::StepLogprobs> steps,
                    const std::function<std::string(int token)>& piece, int* text_offset,
                    openai::ChoiceLogprobs* out) {
  for (const auto& step : steps) {
    const std::string text = piece(step.chosen.token);
    if (chat) {
      AppendChatStep(step, text, piece, out);
    } else {
      AppendCompletionStep(step, text, piece, *text_offset, out);
    }
    *text_offset += static_cast<int>(text.size());
  }
}

}  // namespace evald
