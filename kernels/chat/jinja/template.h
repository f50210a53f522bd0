// A chat template as a program: parsed once, rendered for each conversation. A bounded
// subset of Jinja - what chat templates use: expressions, filters, tests, loops, macros,
// namespace(), raise_exception, strftime_now, tojson - evaluated by @huggingface/jinja's rules
// (the reference, byte for byte) wherever those agree with Python's Jinja2 (what the model's
// own tooling renders). Anything else is refused with its name; a template never gets a
// rendering evald only guesses at. Limits bound the work, the output and the nesting, since a
// model file's template is untrusted input.
#pragma once

#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace evald::kernels::jinja {

struct TemplateLimits {
  size_t max_template_bytes = 1 << 20;
  size_t max_tokens = 200'000;
  int max_nesting = 150;            // blocks and expressions inside each other
  int max_call_depth = 64;          // macros calling macros
  int64_t work_units = 32'000'000;  // nodes evaluated + bytes made (text, lists, scopes)
};

// A value handed to a template (the messages, bos_token, add_generation_prompt, ...), shaped
// as JSON is: a number is an integer when it is integral, as JavaScript decides.
struct TemplateInput {
  enum class Type { kNull, kBoolean, kNumber, kString, kList, kMap };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;
  std::vector<TemplateInput> list;  // kList: the items; kMap: the values
  std::vector<std::string> keys;    // kMap: the keys, in order

  static TemplateInput Null() { return {}; }
  static TemplateInput Boolean(bool b);
  static TemplateInput Number(double n);
  static TemplateInput String(std::string s);
  static TemplateInput List(std::vector<TemplateInput> items);
  static TemplateInput Map(std::vector<std::pair<std::string, TemplateInput>> entries);
};

struct Program;  // the parsed template (jinja_ast.h)

class Template {
 public:
  // InvalidArgument: a syntax error (as the reference reports one), a construct outside the
  // subset (named), or a template past the limits.
  static StatusOr<Template> Parse(std::string_view text, const TemplateLimits& limits = {});

  // The rendered text. `now` is strftime_now's clock (local time by default).
  StatusOr<std::string> Render(const std::vector<std::pair<std::string, TemplateInput>>& variables,
                               std::function<std::tm()> now = {}) const;

 private:
  StatusOr<std::string> RenderProgram(
      const Program& program, const std::vector<std::pair<std::string, TemplateInput>>& variables,
      const std::function<std::tm()>& now) const;

  std::shared_ptr<const Program> program_;
  // A template with carriage returns, as Python's Jinja2 reads it (line breaks as \n).
  std::shared_ptr<const Program> as_python_reads_it_;
  TemplateLimits limits_;
};

}  // namespace evald::kernels::jinja
