// Chat formats (kernels/chat): each family's rendering byte-identical to what a Jinja engine
// (@huggingface/jinja, run by tests/reference/jinja_render.mjs) renders from a template of that
// family, the family and its parameters recognised from the template text, and bad input refused
// with a reason. The templates below are written here in each family's published layout (the
// turns, markers, trimming, default system turn, knowledge header and generation preamble those
// templates write); tool calls, images and reasoning replay are outside what evald renders.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "jinja_reference.h"
#include "kernels/chat/chat_format.h"
#include "test_support.h"

namespace evald::kernels {
namespace {

// Gemma 3: the system message folded into the first user turn.
constexpr const char* kGemma3Style = R"J({{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
  {%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}
  {%- set loop_messages = messages[1:] -%}
{%- else -%}
  {%- set first_user_prefix = '' -%}
  {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
  {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
    {{ raise_exception('roles must alternate') }}
  {%- endif -%}
  {%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}
  {{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') }}
  {{- message['content'] | trim }}{{ '<end_of_turn>\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}{{ '<start_of_turn>model\n' }}{%- endif -%})J";

// Gemma 1 and 2: no system role at all.
constexpr const char* kGemma2Style = R"J({{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}{{ raise_exception('System role not supported') }}{%- endif -%}
{%- for message in messages -%}
  {%- if message['role'] == 'assistant' -%}{%- set role = 'model' -%}{%- else -%}{%- set role = message['role'] -%}{%- endif -%}
  {{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}{{ '<start_of_turn>model\n' }}{%- endif -%})J";

// Gemma 4: <|turn> ... <turn|>, model turns without their thought channels, and an empty
// thought channel after the generation prompt (thinking off).
constexpr const char* kGemma4Style = R"J({{- bos_token -}}
{%- set rest = messages -%}
{%- if messages[0]['role'] == 'system' -%}
  {{- '<|turn>system\n' + messages[0]['content'] | trim + '<turn|>\n' -}}
  {%- set rest = messages[1:] -%}
{%- endif -%}
{%- for m in rest -%}
  {%- if m['role'] == 'assistant' -%}
    {%- set ns = namespace(text='') -%}
    {%- for part in m['content'].split('<channel|>') -%}
      {%- set ns.text = ns.text + part.split('<|channel>')[0] -%}
    {%- endfor -%}
    {{- '<|turn>model\n' + ns.text | trim + '<turn|>\n' -}}
  {%- else -%}
    {{- '<|turn>' + m['role'] + '\n' + m['content'] | trim + '<turn|>\n' -}}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|turn>model\n' -}}
  {%- if not enable_thinking | default(false) -%}{{- '<|channel>thought\n<channel|>' -}}{%- endif -%}
{%- endif -%})J";

// Llama 3.0: a header per message, BOS before the first.
constexpr const char* kLlama3Style = R"J({%- for message in messages -%}
  {%- set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' -%}
  {%- if loop.index0 == 0 -%}{%- set content = bos_token + content -%}{%- endif -%}
  {{- content -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}{%- endif -%})J";

// Llama 3.1+: a system header always, with the knowledge date and the template's default date.
std::string Llama31Style(const std::string& date) {
  return R"J({{- bos_token }}
{%- if not date_string is defined %}{%- set date_string = ")J" +
         date + R"J(" %}{%- endif %}
{%- if messages[0]['role'] == 'system' %}
  {%- set system_message = messages[0]['content'] | trim %}
  {%- set messages = messages[1:] %}
{%- else %}
  {%- set system_message = "" %}
{%- endif %}
{{- "<|start_header_id|>system<|end_header_id|>\n\n" }}
{{- "Cutting Knowledge Date: December 2023\n" }}
{{- "Today Date: " + date_string + "\n\n" }}
{{- system_message }}
{{- "<|eot_id|>" }}
{%- for message in messages %}
  {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{%- endif %})J";
}

constexpr const char* kChatMlStyle = R"J({%- for message in messages %}
  {{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %})J";

// Qwen 2 / 2.5: a constant system turn when the conversation brings none.
std::string QwenStyle(const std::string& default_system) {
  return R"J({%- if messages[0]['role'] == 'system' %}
  {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
{%- else %}
  {{- '<|im_start|>system\n)J" +
         default_system + R"J(<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
  {%- if not (message.role == 'system' and loop.first) %}
    {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
  {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %})J";
}

// DeepSeek V3 / R1: every system message first, earlier reasoning dropped from assistant turns.
std::string DeepSeekStyle(const std::string& generation) {
  return R"J({%- set ns = namespace(system='', first=true) -%}
{%- for m in messages -%}
  {%- if m['role'] == 'system' -%}
    {%- if ns.first -%}{%- set ns.system = m['content'] -%}{%- set ns.first = false -%}
    {%- else -%}{%- set ns.system = ns.system + '\n\n' + m['content'] -%}{%- endif -%}
  {%- endif -%}
{%- endfor -%}
{{- bos_token + ns.system -}}
{%- for m in messages -%}
  {%- if m['role'] == 'user' -%}{{- '<｜User｜>' + m['content'] -}}{%- endif -%}
  {%- if m['role'] == 'assistant' -%}
    {%- set c = m['content'] -%}
    {%- if '</think>' in c -%}{%- set c = c.split('</think>')[-1] -%}{%- endif -%}
    {{- '<｜Assistant｜>' + c + '<｜end▁of▁sentence｜>' -}}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- ')J" +
         generation + R"J(' -}}{%- endif -%})J";
}

using Conversation = std::vector<ChatMessage>;

std::vector<Conversation> Conversations() {
  return {
      {{"system", "You are a Verilog expert.\n"}, {"user", "  Implement a 4-bit counter.\n\n"}},
      {{"user", "Hello"}},
      {{"system", "Answer briefly."},
       {"user", "q1"},
       {"assistant", " a1 \n"},
       {"user", "module TopModule(input a, output b);"}},
      {{"user", "\xc2\xa0\tmodule TopModule();\xe2\x80\xa8 \n"}},  // NBSP, U+2028 around it
      {{"user", "think first"},
       {"assistant",
        "<|channel>thought\nhmm<channel|>answer <think>r</think>\n\nfinal"},  // reasoning
       {"user", "again\xc2\x85"}},                                            // U+0085 is kept
  };
}

// Every (template, conversation) rendered by the Jinja reference, in order.
std::vector<std::string> JinjaRender(const std::vector<std::string>& templates,
                                     const std::vector<Conversation>& conversations,
                                     const std::string& bos) {
  std::vector<testing::JinjaCase> cases;
  for (const auto& t : templates)
    for (const auto& conv : conversations) cases.push_back({t, conv, bos, ""});
  return testing::JinjaRender(cases);
}

struct FamilyCase {
  std::string template_text;
  std::string expected_name;
  std::string bos;
};

std::vector<FamilyCase> FamilyCases() {
  return {
      {kGemma3Style, "gemma", "<bos>"},
      {kGemma4Style, "gemma4", "<bos>"},
      {kLlama3Style, "llama3", "<|begin_of_text|>"},
      {Llama31Style("26 Jul 2024"), "llama3.1", "<|begin_of_text|>"},
      {Llama31Style("01 Dec 2026"), "llama3.1 (template variant)", "<|begin_of_text|>"},
      {kChatMlStyle, "chatml", ""},
      {QwenStyle("You are Qwen, created by Alibaba Cloud. You are a helpful assistant."), "qwen2.5",
       ""},
      {QwenStyle("You are a helpful assistant."), "qwen2", ""},
      {QwenStyle("You write Verilog."), "chatml (template variant)", ""},
      {DeepSeekStyle("<｜Assistant｜>"), "deepseek",
       "<\xef\xbd\x9c"
       "begin\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"},
      {DeepSeekStyle("<｜Assistant｜><think>\\n"), "deepseek-r1", "<s>"},
  };
}

TEST(ChatFormat, EachFamilyRendersByteIdenticalToJinja) {
  if (!testing::HaveNodeReference())
    GTEST_SKIP() << "node and @huggingface/jinja are not installed (scripts/install-deps.sh)";
  const std::vector<Conversation> conversations = Conversations();
  for (const FamilyCase& c : FamilyCases()) {
    auto format = RecognizeChatTemplate(c.template_text);
    ASSERT_TRUE(format.ok()) << c.expected_name << ": " << format.status().ToString();
    EXPECT_EQ(format->name, c.expected_name);
    std::vector<std::string> jinja = JinjaRender({c.template_text}, conversations, c.bos);
    ASSERT_EQ(jinja.size(), conversations.size());
    for (size_t i = 0; i < conversations.size(); ++i) {
      auto ours = RenderChat(*format, conversations[i], c.bos);
      ASSERT_TRUE(ours.ok()) << c.expected_name << " #" << i << ": " << ours.status().ToString();
      EXPECT_EQ(*ours, jinja[i]) << c.expected_name << ", conversation " << i;
    }
  }
}

// Gemma 1 and 2 templates refuse a system message; evald folds it into the first user turn as
// Gemma 3 does. Without one, the renderings are those templates' own.
TEST(ChatFormat, GemmaTwoTemplatesWithoutSystemRenderTheSame) {
  if (!testing::HaveNodeReference())
    GTEST_SKIP() << "node and @huggingface/jinja are not installed (scripts/install-deps.sh)";
  std::vector<Conversation> conversations = {{{"user", " Hi "}},
                                             {{"user", "a"}, {"assistant", "b"}, {"user", "c"}}};
  auto format = RecognizeChatTemplate(kGemma2Style);
  ASSERT_TRUE(format.ok());
  EXPECT_EQ(format->name, "gemma");
  std::vector<std::string> jinja = JinjaRender({kGemma2Style}, conversations, "<bos>");
  for (size_t i = 0; i < conversations.size(); ++i)
    EXPECT_EQ(*RenderChat(*format, conversations[i], "<bos>"), jinja[i]);
  std::vector<std::string> refused =
      JinjaRender({kGemma2Style}, {{{"system", "s"}, {"user", "u"}}}, "<bos>");
  EXPECT_NE(refused[0].find("JINJA ERROR"), std::string::npos);
  EXPECT_EQ(*RenderChat(*format, {{"system", "s"}, {"user", "u"}}, "<bos>"),
            "<bos><start_of_turn>user\ns\n\nu<end_of_turn>\n<start_of_turn>model\n");
}

TEST(ChatFormat, NamedFormatsAreThePublishedDefaults) {
  for (const std::string& name : ChatFormatNames()) {
    auto f = ChatFormatNamed(name);
    ASSERT_TRUE(f.ok()) << name;
    EXPECT_EQ(f->name, name);
    EXPECT_FALSE(f->end_of_turn.empty()) << name;
  }
  auto qwen = ChatFormatNamed("qwen2.5");
  EXPECT_EQ(*RenderChat(*qwen, {{"user", "x"}}, ""),
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
            "assistant.<|im_end|>\n<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n");
  auto bad = ChatFormatNamed("vicuna");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("gemma4"), std::string::npos) << "lists the known names";
}

TEST(ChatFormat, UnknownTemplatesAndBadConversationsAreRefusedWithAReason) {
  auto unknown = RecognizeChatTemplate(
      "{% for m in messages %}### {{ m['role'] }}:\n{{ m['content'] }}\n{% endfor %}\x01");
  ASSERT_FALSE(unknown.ok());
  const std::string& why = unknown.status().message();
  EXPECT_NE(why.find("sha256 "), std::string::npos) << why;
  EXPECT_NE(why.find("beginning \"{% for m in messages %}###"), std::string::npos) << why;
  EXPECT_NE(why.find("--chat-format"), std::string::npos) << why;
  EXPECT_EQ(why.find('\x01'), std::string::npos) << "control bytes of the template are not echoed";

  auto gemma = *ChatFormatNamed("gemma");
  EXPECT_FALSE(RenderChat(gemma, {{"tool", "x"}, {"user", "u"}}, "").ok());
  EXPECT_FALSE(RenderChat(gemma, {{"system", "only"}}, "").ok());
  EXPECT_FALSE(RenderChat(gemma, {}, "").ok());
  auto twice = RenderChat(gemma, {{"user", "a"}, {"user", "b"}}, "");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("alternate"), std::string::npos);
}

TEST(ChatFormat, TrimIsJavaScriptsWhiteSpaceSet) {
  EXPECT_EQ(TrimJinja(" \t\n\v\f\r x y \r\n"), "x y");
  EXPECT_EQ(TrimJinja("\xc2\xa0\xe2\x80\xa8\xef\xbb\xbf"
                      "x"
                      "\xe3\x80\x80"),
            "x");                                          // NBSP LS BOM
  EXPECT_EQ(TrimJinja("\xc2\x85x\x1f"), "\xc2\x85x\x1f");  // U+0085 and US stay (unlike Python)
  EXPECT_EQ(TrimJinja("   "), "");
  EXPECT_EQ(TrimJinja("\xe2\x80"), "\xe2\x80");  // a truncated character is not white space
}

}  // namespace
}  // namespace evald::kernels
