// How a checkpoint's chats become the prompt text its tokenizer reads: the file's own
// tokenizer.chat_template run by the template engine (chat_template.h), or, for a file without
// one, a family format named by --chat-format (chat_format.h). One object for the decoding
// core's server, `evald run`, `evald generate` and `evald drift`, so all render alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "kernels/chat/chat_format.h"
#include "kernels/chat/chat_template.h"
#include "kernels/tokenizer/tokenizer.h"

namespace evald::kernels {

class ChatRenderer {
 public:
  // `format_name` (--chat-format) wins when given; otherwise the file's template is parsed.
  // InvalidArgument when neither is there or the template cannot be rendered (the engine names
  // the construct it refuses), saying what to do; `file` names the model in the message.
  static StatusOr<ChatRenderer> ForFile(const std::optional<std::string>& template_text,
                                        std::string_view format_name, std::string_view file);

  StatusOr<std::string> Render(const std::vector<ChatMessage>& messages, std::string_view bos,
                               std::string_view eos) const;

  // The special tokens that end the model's turn, those of them the vocabulary has (decoding
  // stops at each, as at EOS).
  std::vector<int> EndOfTurnTokens(const Tokenizer& tokenizer) const;

  // What records and logs say: "tokenizer.chat_template sha256:..." or "gemma (--chat-format)".
  const std::string& description() const { return description_; }

 private:
  std::optional<ChatTemplate> template_;
  std::optional<ChatFormat> format_;
  std::string description_;
};

// The tokens of a rendered chat: its special tokens parsed as such, and BOS in front when the
// vocabulary wants one and the template did not write it (as llama.cpp does), never twice.
std::vector<int> ChatPromptTokens(const Tokenizer& tokenizer, std::string_view text);

// The vocabulary's EOS token as text (the templates' eos_token), empty without one.
std::string EosText(const Tokenizer& tokenizer);

}  // namespace evald::kernels
