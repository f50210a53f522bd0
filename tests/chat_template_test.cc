// The chat-template engine (kernels/chat/jinja): real templates from published checkpoints
// (tests/data/chat_templates, see its SOURCE.md) rendered byte-identical to the Jinja reference
// (@huggingface/jinja) or refused by name - never a different text; the language itself case
// by case against the same reference; and its limits against hostile templates.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "base/file_io.h"
#include "jinja_reference.h"
#include "kernels/chat/chat_template.h"
#include "kernels/chat/jinja/template.h"
#include "test_support.h"

namespace evald::kernels {
namespace {

using Conversation = std::vector<ChatMessage>;

constexpr const char* kRefused = "which evald's template engine does not render";

std::vector<Conversation> CorpusConversations() {
  return {
      {{"user", "Implement a 4-bit counter."}},
      {{"system", "You are a Verilog expert."}, {"user", "  Write module TopModule.\n\n"}},
      {{"user", "q1"}, {"assistant", "a1"}, {"user", "q2 with \"quotes\", \\ and {{ braces }}"}},
      {{"system", "Answer briefly.\n"},
       {"user", "caf\xc3\xa9 \xf0\x9f\x98\x80 line1\nline2"},
       {"assistant", " spaced answer \n"},
       {"user", "again"}},
      {{"user", "think first"},
       {"assistant", "<think>\nreasoning\n</think>\n\nfinal answer"},
       {"user", "next"}},
  };
}

// The corpus in the repository, or another folder of .jinja files named by
// EVALD_CHAT_TEMPLATES (a held-out set checked the same way).
const char* HeldOutDir() {
  return std::getenv("EVALD_CHAT_TEMPLATES");
}

std::map<std::string, std::string> CorpusTemplates() {
  std::map<std::string, std::string> out;
  const std::string dir =
      HeldOutDir() ? HeldOutDir() : testing::SourceDir() + "/tests/data/chat_templates";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".jinja") continue;
    auto text = ReadFileBounded(entry.path().string());
    EXPECT_TRUE(text.ok()) << entry.path();
    if (text.ok()) out[entry.path().filename().string()] = *text;
  }
  return out;
}

// Every (template, conversation) pair, in the order the tests walk them.
std::vector<testing::JinjaCase> CorpusCases(const std::map<std::string, std::string>& templates,
                                            const std::vector<Conversation>& conversations) {
  std::vector<testing::JinjaCase> cases;
  for (const auto& [name, text] : templates)
    for (const auto& c : conversations) cases.push_back({text, c, "<bos>", "<eos>"});
  return cases;
}

// Every corpus template with every conversation: where the reference renders, evald renders
// the same bytes or refuses by name; where the reference fails, evald fails too. At least three
// quarters of the templates must render every conversation the reference renders.
TEST(ChatTemplate, RealTemplatesRenderAsTheReferenceOrAreRefusedByName) {
  if (!testing::HaveNodeReference())
    GTEST_SKIP() << "node and @huggingface/jinja are not installed (scripts/install-deps.sh)";
  const auto templates = CorpusTemplates();
  ASSERT_GE(templates.size(), HeldOutDir() ? 1u : 25u);
  const auto conversations = CorpusConversations();
  const std::vector<testing::JinjaCase> cases = CorpusCases(templates, conversations);
  const std::vector<std::string> reference = testing::JinjaRender(cases);
  ASSERT_EQ(reference.size(), cases.size());
  size_t i = 0, identical = 0, refused = 0, both_failed = 0, whole_templates = 0;
  for (const auto& [name, text] : templates) {
    auto parsed = ChatTemplate::Parse(text);
    bool whole = true;
    for (const auto& c : conversations) {
      const std::string& want = reference[i++];
      const bool reference_failed = want.rfind("JINJA ERROR: ", 0) == 0;
      StatusOr<std::string> got = parsed.ok() ? parsed->Render(c, "<bos>", "<eos>")
                                              : StatusOr<std::string>(parsed.status());
      if (got.ok()) {
        EXPECT_FALSE(reference_failed)
            << name << ": evald rendered what the reference refuses (" << want << ")";
        EXPECT_EQ(*got, want) << name << ", conversation " << (i - 1) % conversations.size();
        identical += *got == want;
      } else if (got.status().message().find(kRefused) != std::string::npos) {
        ++refused;
        whole = whole && reference_failed;
        std::printf("  %s: refused: %s\n", name.c_str(), got.status().message().c_str());
      } else {
        EXPECT_TRUE(reference_failed) << name << ": evald failed (" << got.status().ToString()
                                      << ") where the reference renders";
        ++both_failed;
        if (getenv("EVALD_JINJA_VERBOSE"))
          std::printf("  %s: both failed: %s / %s\n", name.c_str(), got.status().message().c_str(),
                      want.c_str());
      }
    }
    whole_templates += whole;
  }
  std::printf(
      "%zu cases: %zu byte-identical, %zu refused by name, %zu failed in both; %zu of %zu "
      "templates render every conversation the reference renders\n",
      cases.size(), identical, refused, both_failed, whole_templates, templates.size());
  EXPECT_GE(whole_templates, templates.size() * 3 / 4);
}

// Wherever evald renders a corpus template, Python's Jinja2 set up as transformers sets it up
// (what the model's own tooling renders) writes the same bytes: the constructs where it and the
// reference differ are the ones refused.
TEST(ChatTemplate, WhatEvaldRendersPythonsJinja2RendersTheSame) {
  if (!testing::HavePythonJinja2())
    GTEST_SKIP() << "python3-jinja2 is not installed (scripts/install-deps.sh)";
  const auto templates = CorpusTemplates();
  const auto conversations = CorpusConversations();
  const std::vector<testing::JinjaCase> cases = CorpusCases(templates, conversations);
  const std::vector<std::string> python = testing::PythonJinja2Render(cases);
  ASSERT_EQ(python.size(), cases.size());
  size_t i = 0, same = 0;
  for (const auto& [name, text] : templates) {
    auto parsed = ChatTemplate::Parse(text);
    for (const auto& c : conversations) {
      const std::string& want = python[i++];
      if (!parsed.ok()) continue;
      auto got = parsed->Render(c, "<bos>", "<eos>");
      if (!got.ok()) continue;
      EXPECT_EQ(*got, want) << name << ", conversation " << (i - 1) % conversations.size();
      same += *got == want;
    }
  }
  std::printf("%zu renderings equal to Python's Jinja2\n", same);
  EXPECT_GE(same, cases.size() / 2);
}

// Small templates exercising one rule each, compared with the reference.
TEST(ChatTemplate, LanguageRulesMatchTheReference) {
  if (!testing::HaveNodeReference())
    GTEST_SKIP() << "node and @huggingface/jinja are not installed (scripts/install-deps.sh)";
  const std::vector<std::string> snippets = {
      "a  {%- if true %}  b  {% endif -%}  c\n",
      "  {% for m in messages %}\n[{{ loop.index }}/{{ loop.length }}{{ '!' if loop.last }}]\n  {% "
      "endfor %}\nend",
      "{# note -#}   x{{- ' y ' -}}  z",
      "{{ 7 // 2 }} {{ 7 / 2 }} {{ 2 * 3.5 }} {{ -3 }} {{ 10 % 4 }} {{ 1 + 2 * 3 }} {{ 4.0 }} {{ "
      "1.5e3 if false else 0.25 }}",
      "{{ 'abc'[1] }}{{ 'hello'[1:3] }}{{ 'hello'[::-1] }}{{ [1,2,3][-1] }}{{ [1,2,3][1:] | length "
      "}}",
      "{{ '  x  ' | trim }}|{{ 'a,b,c'.split(',') | join('-') }}|{{ 'Hi' | upper }}{{ 'Hi' | lower "
      "}}",
      "{{ 'a b  c'.split() | length }}{{ 'a-b-c'.split('-', 1)[1] }}{{ 'xyz'.replace('y', 'Y') }}",
      "{{ {'b': 1, 'a': [1, 'x', none]} | tojson }}{{ 'é\"\\n' | tojson }}{{ {'k': 'é'} | "
      "tojson(ensure_ascii=true) }}",
      "{{ {'a': {'b': [1, 2]}} | tojson(indent=2) }}",
      "{%- set ns = namespace(n=0, s='') -%}{%- for m in messages -%}{%- set ns.n = ns.n + 1 "
      "-%}{%- set ns.s = ns.s ~ m.role[0] -%}{%- endfor -%}{{ ns.n }}{{ ns.s }}",
      "{% macro f(a, b='d') %}<{{ a }}{{ b }}>{% endmacro %}{{ f(1) }}{{ f('x', b='y') }}{{ "
      "f(b='q', a='p') }}",
      "{% for k, v in {'x': 1, 'y': 2}.items() %}{{ k }}={{ v }};{% endfor %}{% for k in {'p': 1} "
      "%}{{ k }}{% endfor %}",
      "{% for x in [1, 2, 3, 4] if x is even %}{{ x }}{% else %}none{% endfor %}{% for x in [] "
      "%}{% else %}empty{% endfor %}",
      "{% for x in [1, 2, 3] %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}{% endfor %}",
      "{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | join(',') "
      "}}",
      "{% macro b(x) %}{{ 'T' if x else 'F' }}{% endmacro %}{{ b(messages[0].content is string) "
      "}}{{ b(x is defined) }}{{ b(none is none) }}{{ b(3 is odd) }}{{ b(messages is sequence) "
      "}}{{ b('x' in 'xyz') }}{{ b('q' not in ['a']) }}{{ b('role' in messages[0]) }}{{ b(not (1 "
      "== 1)) }}{{ b(messages[0].role is upper) }}",
      "{{ undefined_thing | default('dflt') }}{{ '' | default('e', true) }}{{ x ~ 'y' }}",
      "{{ {'b': 2, 'A': 1} | dictsort | tojson }}{{ ['b', 'A', 'c'] | sort | join }}{{ [3, 1, 2] | "
      "sort(reverse=true) | join }}",
      "{%- set x = 1 -%}{%- for i in range(3) -%}{%- set x = i -%}{%- endfor -%}{{ x }}{{ range(2, "
      "8, 3) | join(',') }}",
      "{%- if messages[0]['role'] == 'system' -%}{{ raise_exception('no system') }}{%- endif -%}ok",
      "{% set t %}block {{ 1 + 1 }}{% endset %}[{{ t }}]{% filter upper %}shout{% endfilter %}",
      "{{ 'a' + 1 }}",
      "{{ [1] < [2] }}",
      "{% for x in 5 %}{% endfor %}",
      "{{ 'hello world'.title() }}{{ 'x' if 'Hello'.startswith(('x', 'H')) }}{{ 'one\\ntwo' | "
      "indent(2) }}{{ 'a\\n\\nb' | indent(first=true) }}",
      "{% if a %}{% elif messages %}E{% else %}F{% endif %}{{ (1, 2) | length }}{{ ([1, 2] + [3]) "
      "| join }}",
      "{% generation %}gen {%- endgeneration %} done",
      // Where Python and the reference part ways (found by the random templates below): each is
      // refused, and the rest of each line renders the same in all three.
      "{{ 'a,b,c'|title }}",
      "{{ 'hello world-wide (x)'|title }}",
      "{{ 'T' if (0 is number)|bool else 'F' }}",
      "{{ 'T' if range(1, 4) is lower else 'F' }}",
      "{{ '\\n'|indent(first=true)|length }}",
      "{{ 'T' if nothing is sequence else 'F' }}",
      "{{ 'T' if nothing is iterable else 'F' }}",
      "{{ 'T' if nothing is callable else 'F' }}",
      "{{ 'T' if (5|safe) is string else 'F' }}",
      "{{ 100 % -2.5 }}",
      // Filters Python returns as generators, views and ranges.
      "{% if messages[::2]|selectattr('role', 'equalto', 'user') %}T{% endif %}",
      "{{ messages|selectattr('role', 'equalto', 'user')|length }}",
      "{{ (messages|selectattr('role', 'equalto', 'user'))[0].content }}",
      "{% set g = messages|selectattr('role', 'equalto', 'user') %}{% for m in g %}{{ m.content "
      "}}{% endfor %}{% for m in g %}{{ m.content }}{% endfor %}",
      "{{ range(3)|tojson }}",
      "{{ (messages|reverse)[0].role }}",
      "{{ ([] + {'a': 1}.items()|first)|length }}",
      "{{ ((1, 2) + (1, 2) + [3])|length }}",
      "{{ {'b': 1, 'a': 2}.dictsort()|length }}",
      "{{ 'T' if {'a': 1}.dictsort else 'F' }}",
      "{% set n = namespace({'a': 1}.items()) %}{{ n.a }}",
      "{{ messages|selectattr('role', 'equalto', 'user')|map(attribute='content')|join(',') }}{% "
      "for k, v in {'a': 1}.items() %}{{ k }}{{ v }}{% endfor %}{{ range(3)|length }}{{ "
      "(messages|reverse|first).role }}{{ messages|reverse|list|length }}",
      // Markup (what |safe makes in Python) escapes what + and its methods take.
      "{{ ('x'|safe + '<s>')|length }}",
      "{{ ('ab'|safe).replace('a', '<') }}",
      "{{ ('x'|safe + 'y')|upper }}{{ 'a<b'|safe ~ '<' }}",
      // Scopes: Python's loop iterations, set and filter blocks end theirs; its loop object has
      // more attributes and is no mapping; it tests a loop's filter as the loop reaches each item.
      "{% for x in [1, 2] %}{% if loop.first %}{% set y = 'a' %}{% endif %}{{ y }}{% endfor %}",
      "{% filter upper %}{% set m = 'in' %}{{ m }}{% endfilter %}[{{ m }}]",
      "{% set b %}{% set m = 'in' %}{{ m }}{% endset %}[{{ m }}]{{ b }}",
      "{% for x in [1, 2] %}{{ loop.depth }}{% endfor %}",
      "{% for x in [1] %}{{ 'T' if loop is mapping else 'F' }}{% endfor %}",
      "{% set ns = namespace(flag=false) %}{% for x in [1, 2] if not ns.flag %}{% set ns.flag = "
      "true %}{{ x }}{% endfor %}",
  };
  std::vector<testing::JinjaCase> cases;
  const Conversation conv = {{"system", "S"}, {"user", "U1"}, {"assistant", "A"}, {"user", "U2"}};
  for (const auto& s : snippets) cases.push_back({s, conv, "<s>", "</s>"});
  const std::vector<std::string> reference = testing::JinjaRender(cases);
  ASSERT_EQ(reference.size(), snippets.size());
  // What evald renders, Python's Jinja2 renders too (when it is here to ask).
  const std::vector<std::string> python = testing::HavePythonJinja2()
                                              ? testing::PythonJinja2Render(cases)
                                              : std::vector<std::string>(snippets.size());
  int rendered = 0;
  for (size_t i = 0; i < snippets.size(); ++i) {
    auto t = ChatTemplate::Parse(snippets[i]);
    StatusOr<std::string> got =
        t.ok() ? t->Render(conv, "<s>", "</s>") : StatusOr<std::string>(t.status());
    const bool reference_failed = reference[i].rfind("JINJA ERROR: ", 0) == 0;
    if (got.ok()) {
      EXPECT_EQ(*got, reference[i]) << snippets[i];
      if (testing::HavePythonJinja2()) {
        EXPECT_EQ(*got, python[i]) << snippets[i] << " (Python)";
      }
      ++rendered;
    } else {
      const bool refused = got.status().message().find(kRefused) != std::string::npos;
      EXPECT_TRUE(reference_failed || refused) << snippets[i] << ": " << got.status().ToString()
                                               << " but the reference gives " << reference[i];
      if (refused)
        std::printf("  refused: %s (%s)\n", snippets[i].c_str(), got.status().message().c_str());
    }
  }
  EXPECT_GE(rendered, 20);
}

// Random small templates (tests/reference/jinja_random_templates.py: expressions with the
// operators, filters, tests, methods and slices chat templates use; statements nested a few
// deep), each rendered by evald, @huggingface/jinja and Python's Jinja2. Where evald renders,
// both references render the same bytes; where it fails and the reference renders, it refuses
// by name. (Most random templates are wrong somewhere; a few hundred of each kind render.)
TEST(ChatTemplate, RandomTemplatesRenderAsBothReferencesOrAreRefusedByName) {
  if (!testing::HaveNodeReference() || !testing::HavePythonJinja2())
    GTEST_SKIP() << "node, @huggingface/jinja and python3-jinja2 are needed "
                    "(scripts/install-deps.sh)";
  for (const char* mode : {"expressions", "statements"}) {
    auto generated =
        testing::RunShell("/usr/bin/python3 " + testing::SourceDir() +
                          "/tests/reference/jinja_random_templates.py " + mode + " 7 1500");
    ASSERT_EQ(generated.exit_code, 0) << generated.output;
    const std::vector<testing::JinjaCase> cases = testing::ReadJinjaCases(generated.output);
    ASSERT_EQ(cases.size(), 1500u);
    const std::vector<std::string> reference = testing::JinjaRender(cases);
    const std::vector<std::string> python = testing::PythonJinja2Render(cases);
    ASSERT_EQ(reference.size(), cases.size());
    ASSERT_EQ(python.size(), cases.size());
    int rendered = 0, refused = 0, wrong = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      auto t = ChatTemplate::Parse(cases[i].template_text);
      StatusOr<std::string> got =
          t.ok() ? t->Render(cases[i].messages, "<s>", "</s>") : StatusOr<std::string>(t.status());
      const bool reference_failed = reference[i].rfind("JINJA ERROR: ", 0) == 0;
      bool bad = false;
      if (got.ok()) {
        ++rendered;
        bad = *got != reference[i] || *got != python[i];
      } else if (got.status().message().find(kRefused) != std::string::npos) {
        ++refused;
      } else {
        bad = !reference_failed;
      }
      if (bad && ++wrong <= 5)
        ADD_FAILURE() << mode << " case " << i << ":\n"
                      << cases[i].template_text
                      << "\nevald: " << (got.ok() ? *got : got.status().ToString())
                      << "\nreference: " << reference[i] << "\nPython: " << python[i];
    }
    std::printf(
        "%s: %zu templates, %d rendered by evald as by both references, %d refused by "
        "name, %d wrong\n",
        mode, cases.size(), rendered, refused, wrong);
    EXPECT_EQ(wrong, 0) << mode;
    EXPECT_GE(rendered, 100) << mode;
  }
}

jinja::TemplateInput Messages(const Conversation& conv) {
  std::vector<jinja::TemplateInput> list;
  for (const auto& m : conv)
    list.push_back(
        jinja::TemplateInput::Map({{"role", jinja::TemplateInput::String(m.role)},
                                   {"content", jinja::TemplateInput::String(m.content)}}));
  return jinja::TemplateInput::List(std::move(list));
}

StatusOr<std::string> RenderText(const std::string& text,
                                 const jinja::TemplateLimits& limits = {}) {
  auto t = jinja::Template::Parse(text, limits);
  if (!t.ok()) return t.status();
  return t->Render({{"messages", Messages({{"user", "hi"}})}});
}

// Where Python's Jinja2 (what the model's own tooling renders) and the reference disagree, the
// engine refuses by name instead of picking one.
TEST(ChatTemplate, WherePythonAndTheReferenceDifferItRefusesByName) {
  for (const char* text : {"{{ true }}",
                           "{{ [1, 2] }}",
                           "{{ 'x' + 1 }}",
                           "{{ 1.0 ~ '' }}",
                           "{{ 'aXb'.title() }}",
                           "{{ 'xxhixx'.strip('x') }}",
                           "{{ 1 == '1' }}",
                           "{{ none == undefined_name }}",
                           "{{ undefined_name.attr }}",
                           "{{ 'abc'.length }}",
                           "{{ {'a': 1} | tojson(sort_keys=true) }}",
                           "{{ 'é' | upper }}",
                           "{{ strftime_now('%A') }}",
                           "{% for x in [1, 2] %}{{ x }}{% break %}{% endfor %}",
                           "{% macro m() %}{{ caller() }}{% endmacro %}",
                           "{% call m() %}x{% endcall %}",
                           "line one\r\n{{ 'two' }}",
                           "{{ none }}",
                           "{{ messages[0].get('missing') }}",
                           "{{ 'a' }}\xe2\x80\xa8  {% if true %}b{% endif %}"}) {
    auto r = RenderText(text);
    ASSERT_FALSE(r.ok()) << text << " rendered as " << *r;
    EXPECT_NE(r.status().message().find(kRefused), std::string::npos)
        << text << ": " << r.status().ToString();
  }
}

// Carriage returns the whitespace control removes change nothing: such a template renders.
TEST(ChatTemplate, CarriageReturnsThatNeverReachTheOutputAreFine) {
  auto r = RenderText("{%- if true -%}\r\n  x\r\n{%- endif -%}\r\n{{ 'y' }}");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "xy");
}

// A hostile template ends with an error: unbounded recursion, output growth, nesting.
TEST(ChatTemplate, HostileTemplatesEndWithinTheLimits) {
  auto recursion = RenderText("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  ASSERT_FALSE(recursion.ok());
  EXPECT_NE(recursion.status().message().find("macros calling each other"), std::string::npos);

  auto growth = RenderText(
      "{% set ns = namespace(s='xxxxxxxxxxxxxxxx') %}{% for i in range(100) %}"
      "{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s | length }}");
  ASSERT_FALSE(growth.ok());
  EXPECT_EQ(growth.status().code(), Status::Code::kResourceExhausted);

  auto loops = RenderText(
      "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}");
  ASSERT_FALSE(loops.ok());
  EXPECT_EQ(loops.status().code(), Status::Code::kResourceExhausted);

  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "(";
  auto nested = RenderText("{{ " + deep + " }}");
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.status().message().find("nested more than"), std::string::npos);

  auto self = RenderText("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns | tojson }}");
  ASSERT_FALSE(self.ok());

  jinja::TemplateLimits small;
  small.max_template_bytes = 16;
  EXPECT_FALSE(RenderText("{{ 'a long template text' }}", small).ok());
}

TEST(ChatTemplate, SyntaxErrorsAreReported) {
  for (const char* text : {"{{ 'unterminated }}", "{% if x %}no end", "{{ 1 +* }}", "{% bogus %}",
                           "{{ a.'b' }}", "{# open comment", "{{ '\\q' }}", "{{ x }"}) {
    auto r = RenderText(text);
    EXPECT_FALSE(r.ok()) << text;
  }
}

TEST(ChatTemplate, StrftimeNowUsesTheGivenClock) {
  auto t = jinja::Template::Parse("{{ strftime_now('%d %b %Y %H:%M %B %m %%') }}");
  ASSERT_TRUE(t.ok());
  auto r = t->Render({}, [] {
    std::tm tm{};
    tm.tm_year = 126;
    tm.tm_mon = 11;
    tm.tm_mday = 3;
    tm.tm_hour = 7;
    tm.tm_min = 5;
    return tm;
  });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "03 Dec 2026 07:05 December 12 %");
}

TEST(ChatTemplate, EndOfTurnMarkersComeFromTheTemplate) {
  auto t = ChatTemplate::Parse(
      "{% for m in messages %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->end_of_turn_markers(), std::vector<std::string>{"<|im_end|>"});
}

}  // namespace
}  // namespace evald::kernels
