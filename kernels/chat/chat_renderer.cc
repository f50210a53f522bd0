#include "kernels/chat/chat_renderer.h"

namespace evald::kernels {

StatusOr<ChatRenderer> ChatRenderer::ForFile(const std::optional<std::string>& template_text,
                                             std::string_view format_name, std::string_view file) {
  ChatRenderer r;
  if (!format_name.empty()) {
    auto format = ChatFormatNamed(format_name);
    if (!format.ok()) return format.status();
    r.description_ = format->name + " (--chat-format)";
    r.format_ = std::move(*format);
    return r;
  }
  if (!template_text || template_text->empty())
    return Status::InvalidArgument(std::string(file) +
                                   " has no tokenizer.chat_template; choose a chat format with "
                                   "--chat-format (or chat_format on the checkpoint)");
  auto parsed = ChatTemplate::Parse(*template_text);
  if (!parsed.ok())
    return parsed.status().Annotate(std::string(file) +
                                    ": tokenizer.chat_template (choose a chat format with "
                                    "--chat-format to render chats without it)");
  r.description_ = "tokenizer.chat_template " + parsed->digest();
  r.template_ = std::move(*parsed);
  return r;
}

StatusOr<std::string> ChatRenderer::Render(const std::vector<ChatMessage>& messages,
                                           std::string_view bos, std::string_view eos) const {
  if (format_) return RenderChat(*format_, messages, bos);
  auto text = template_->Render(messages, bos, eos);
  if (!text.ok()) return text.status().Annotate("rendering the chat template");
  return text;
}

std::vector<int> ChatRenderer::EndOfTurnTokens(const Tokenizer& tokenizer) const {
  const std::vector<std::string> markers =
      format_ ? std::vector<std::string>{format_->end_of_turn} : template_->end_of_turn_markers();
  std::vector<int> tokens;
  for (const std::string& marker : markers)
    if (const int t = tokenizer.SpecialToken(marker); t >= 0) tokens.push_back(t);
  return tokens;
}

std::vector<int> ChatPromptTokens(const Tokenizer& tokenizer, std::string_view text) {
  std::vector<int> tokens = tokenizer.EncodeWithSpecialTokens(text, false);
  const int bos = tokenizer.bos();
  if (tokenizer.add_bos() && bos >= 0 && (tokens.empty() || tokens[0] != bos))
    tokens.insert(tokens.begin(), bos);
  return tokens;
}

std::string EosText(const Tokenizer& tokenizer) {
  return tokenizer.eos() >= 0 ? tokenizer.Piece(tokenizer.eos()) : std::string();
}

}  // namespace evald::kernels
