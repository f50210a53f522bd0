#include "kernels/chat/chat_template.h"

#include "base/hash.h"

namespace evald::kernels {

namespace {

// Turn-ending special tokens of the published chat formats. A template that writes one after
// a message ends the model's turn with it; the ones a template mentions are kept.
constexpr const char* kTurnEndMarkers[] = {"<end_of_turn>",
                                           "<turn|>",
                                           "<|eot_id|>",
                                           "<|im_end|>",
                                           "<|end|>",
                                           "<|eom_id|>",
                                           "<|endoftext|>",
                                           "<|return|>",
                                           "<｜end▁of▁sentence｜>",
                                           "<|END_OF_TURN_TOKEN|>",
                                           "</s>"};

}  // namespace

StatusOr<ChatTemplate> ChatTemplate::Parse(std::string_view template_text) {
  auto program = jinja::Template::Parse(template_text);
  if (!program.ok()) return program.status();
  ChatTemplate t;
  t.program_ = std::move(*program);
  for (const char* marker : kTurnEndMarkers)
    if (template_text.find(marker) != std::string_view::npos) t.end_markers_.push_back(marker);
  t.digest_ = "sha256:" + Sha256Hex(template_text).substr(0, 16);
  return t;
}

StatusOr<std::string> ChatTemplate::Render(const std::vector<ChatMessage>& messages,
                                           std::string_view bos, std::string_view eos) const {
  using jinja::TemplateInput;
  std::vector<TemplateInput> list;
  for (const auto& m : messages) {
    list.push_back(TemplateInput::Map(
        {{"role", TemplateInput::String(m.role)}, {"content", TemplateInput::String(m.content)}}));
  }
  return program_.Render({{"messages", TemplateInput::List(std::move(list))},
                          {"bos_token", TemplateInput::String(std::string(bos))},
                          {"eos_token", TemplateInput::String(std::string(eos))},
                          {"add_generation_prompt", TemplateInput::Boolean(true)},
                          // As transformers and vLLM pass them for a request without any.
                          {"tools", TemplateInput::Null()},
                          {"documents", TemplateInput::Null()}});
}

}  // namespace evald::kernels
