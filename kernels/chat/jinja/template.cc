#include "kernels/chat/jinja/template.h"

#include <cmath>

#include "base/py_text.h"
#include "kernels/chat/jinja/jinja_builtins.h"
#include "kernels/chat/jinja/jinja_interpreter.h"
#include "kernels/chat/jinja/jinja_lexer.h"
#include "kernels/chat/jinja/jinja_parser.h"

namespace evald::kernels::jinja {

struct Program {
  NodeList statements;
};

TemplateInput TemplateInput::Boolean(bool b) {
  TemplateInput v;
  v.type = Type::kBoolean;
  v.boolean = b;
  return v;
}
TemplateInput TemplateInput::Number(double n) {
  TemplateInput v;
  v.type = Type::kNumber;
  v.number = n;
  return v;
}
TemplateInput TemplateInput::String(std::string s) {
  TemplateInput v;
  v.type = Type::kString;
  v.text = std::move(s);
  return v;
}
TemplateInput TemplateInput::List(std::vector<TemplateInput> items) {
  TemplateInput v;
  v.type = Type::kList;
  v.list = std::move(items);
  return v;
}
TemplateInput TemplateInput::Map(std::vector<std::pair<std::string, TemplateInput>> entries) {
  TemplateInput v;
  v.type = Type::kMap;
  for (auto& [key, value] : entries) {
    v.keys.push_back(std::move(key));
    v.list.push_back(std::move(value));
  }
  return v;
}

namespace {

Value ToValue(const TemplateInput& in, Heap& heap, WorkBudget& budget) {
  budget.Charge(1);
  switch (in.type) {
    case TemplateInput::Type::kNull:
      return Value::Null();
    case TemplateInput::Type::kBoolean:
      return Value::Boolean(in.boolean);
    case TemplateInput::Type::kNumber:
      return std::isfinite(in.number) && std::trunc(in.number) == in.number
                 ? Value::Integer(in.number)
                 : Value::Float(in.number);
    case TemplateInput::Type::kString:
      budget.Charge(static_cast<int64_t>(in.text.size()));
      return Value::String(in.text);
    case TemplateInput::Type::kList: {
      ValueList items;
      for (const auto& item : in.list) items.push_back(ToValue(item, heap, budget));
      return heap.NewList(Kind::kArray, std::move(items));
    }
    case TemplateInput::Type::kMap: {
      ValueMap map;
      for (size_t i = 0; i < in.keys.size(); ++i)
        map.Set(in.keys[i], ToValue(in.list[i], heap, budget));
      return heap.NewMap(Kind::kObject, std::move(map));
    }
  }
  return Value::Undefined();
}

std::tm LocalNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm;
}

}  // namespace

namespace {

StatusOr<std::shared_ptr<const Program>> Compile(std::string_view text,
                                                 const TemplateLimits& limits) {
  auto tokens = Tokenize(text, limits.max_tokens);
  if (!tokens.ok()) return tokens.status();
  auto statements = jinja::Parse(*tokens, limits.max_nesting);
  if (!statements.ok()) return statements.status();
  auto program = std::make_shared<Program>();
  program->statements = std::move(*statements);
  return std::shared_ptr<const Program>(std::move(program));
}

}  // namespace

StatusOr<Template> Template::Parse(std::string_view text, const TemplateLimits& limits) {
  if (text.size() > limits.max_template_bytes)
    return Status::InvalidArgument("chat template: " + std::to_string(text.size()) +
                                   " bytes, more than the " +
                                   std::to_string(limits.max_template_bytes) + " allowed");
  // The reference starts a line after U+2028/U+2029 too (lstrip_blocks); Python's Jinja2 does not.
  for (std::string_view separator : {"\xe2\x80\xa8", "\xe2\x80\xa9"})
    if (text.find(separator) != std::string_view::npos)
      return Status::InvalidArgument(
          "chat template uses a Unicode line or paragraph separator in its text (Python's Jinja2 "
          "and the reference read it differently), which evald's template engine does not "
          "render");
  auto program = Compile(text, limits);
  if (!program.ok()) return program.status();
  Template t;
  t.program_ = std::move(*program);
  t.limits_ = limits;
  // Python's Jinja2 reads \r\n and \r as \n, the reference keeps them: such a template is also
  // compiled as Python reads it, and a render stands only where both texts agree.
  if (text.find('\r') != std::string_view::npos) {
    auto normalized = Compile(py::TranslateNewlines(text), limits);  // as Python reads it
    if (!normalized.ok()) return normalized.status();
    t.as_python_reads_it_ = std::move(*normalized);
  }
  return t;
}

StatusOr<std::string> Template::Render(
    const std::vector<std::pair<std::string, TemplateInput>>& variables,
    std::function<std::tm()> now) const {
  if (!now) now = LocalNow;
  auto text = RenderProgram(*program_, variables, now);
  if (!text.ok() || !as_python_reads_it_) return text;
  auto python = RenderProgram(*as_python_reads_it_, variables, now);
  if (!python.ok() || *python != *text)
    return Status::InvalidArgument(
        "chat template uses carriage returns that reach its output (Python's Jinja2 reads them "
        "as \\n, the reference keeps them), which evald's template engine does not render");
  return text;
}

StatusOr<std::string> Template::RenderProgram(
    const Program& program, const std::vector<std::pair<std::string, TemplateInput>>& variables,
    const std::function<std::tm()>& now) const {
  WorkBudget budget(limits_.work_units);
  Heap heap(budget);
  Interpreter interpreter(heap, budget, limits_.max_call_depth);
  try {
    Environment* globals = heap.NewEnvironment(nullptr);
    DefineGlobals(interpreter, globals, now);
    for (const auto& [name, value] : variables) {
      if (globals->variables.count(name))
        return Status::InvalidArgument("chat template variable already declared: " + name);
      globals->Set(name, ToValue(value, heap, budget));
    }
    return interpreter.Run(program.statements, globals);
  } catch (const RenderError& e) {
    return e.status;
  }
}

}  // namespace evald::kernels::jinja
