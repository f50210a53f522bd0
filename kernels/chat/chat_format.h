// The published chat formats of five families, for checkpoints whose file carries no chat
// template (--chat-format, "chat_format" on a checkpoint): each family's layout - turns,
// markers, trimming, default system turn, knowledge-date header, generation preamble - written
// by evald itself. A file's own template is rendered by the template engine instead
// (chat_template.h, chat_renderer.h). RecognizeChatTemplate still names the family a template
// belongs to (for --chat-format's defaults and the tests). tests/chat_format_test.cc checks every
// rendering byte for byte against a Jinja engine (@huggingface/jinja) on templates of each family.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace evald::kernels {

enum class ChatFamily { kGemma, kGemma4, kLlama3, kChatMl, kDeepSeek };

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

// A one-question chat: the system turn (left out when empty), then the user's.
std::vector<ChatMessage> SystemAndUserTurns(const std::string& system, const std::string& user);

struct ChatFormat {
  ChatFamily family = ChatFamily::kChatMl;
  std::string name;  // what runs record: "gemma", "llama3.1", "qwen2.5", ...
  // chatml: the system turn written when the conversation has none (Qwen 2 and 2.5).
  std::string default_system;
  // llama3: the 3.1+ system header ("Cutting Knowledge Date: ...\nToday Date: ...") when set.
  std::string knowledge_cutoff, today;
  // After the generation prompt: gemma4's empty thought channel, DeepSeek R1's "<think>\n".
  bool generation_preamble = false;
  // The text of the token that ends a model turn (decoding stops there as at EOS).
  std::string end_of_turn;
};

// The names --chat-format takes, each a family with its published templates' defaults.
std::vector<std::string> ChatFormatNames();
std::string ChatFormatNameList();  // "gemma, gemma4, ...", for help texts and errors
StatusOr<ChatFormat> ChatFormatNamed(std::string_view name);

// The format a template renders; NotFound naming the template (a digest and its first
// characters) when it is not one of the families above.
StatusOr<ChatFormat> RecognizeChatTemplate(std::string_view template_text);

// The prompt for the model's next turn (the template's add_generation_prompt). `bos` is the
// text of the vocabulary's BOS token (the templates' bos_token). InvalidArgument for a role
// other than system/user/assistant, or an order the family's templates refuse.
StatusOr<std::string> RenderChat(const ChatFormat& format, const std::vector<ChatMessage>& messages,
                                 std::string_view bos);

// Jinja's `trim` filter as @huggingface/jinja applies it (JavaScript's String.trim: ASCII and
// Unicode white space, line terminators, U+FEFF).
std::string_view TrimJinja(std::string_view text);

}  // namespace evald::kernels
