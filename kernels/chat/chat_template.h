// A checkpoint's own chat template (tokenizer.chat_template) rendered by evald's template
// engine (kernels/chat/jinja): the conversation as messages, bos_token and eos_token from the
// vocabulary, add_generation_prompt set, tools and documents none - what transformers and vLLM
// hand a template for a request without tools. The
// family formats of chat_format.h stay for files without a template (--chat-format).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "kernels/chat/chat_format.h"
#include "kernels/chat/jinja/template.h"

namespace evald::kernels {

class ChatTemplate {
 public:
  // InvalidArgument naming what the engine cannot parse or does not render.
  static StatusOr<ChatTemplate> Parse(std::string_view template_text);

  // The prompt for the model's next turn. Errors are the template's own (raise_exception,
  // a type error) or a construct outside the engine's subset, each named.
  StatusOr<std::string> Render(const std::vector<ChatMessage>& messages, std::string_view bos,
                               std::string_view eos) const;

  // The special-token strings that end a model turn in this template's family (decoding stops
  // at each that the vocabulary has, as at EOS): markers the template writes after a turn.
  const std::vector<std::string>& end_of_turn_markers() const { return end_markers_; }
  const std::string& digest() const { return digest_; }  // names the template in records

 private:
  jinja::Template program_;
  std::vector<std::string> end_markers_;
  std::string digest_;
};

}  // namespace evald::kernels
