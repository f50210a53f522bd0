#include "kernels/chat/jinja/jinja_interpreter.h"

#include <algorithm>
#include <cmath>

#include "kernels/chat/jinja/jinja_builtins.h"
#include "kernels/chat/jinja/jinja_filters.h"
#include "kernels/chat/jinja/jinja_format.h"
#include "kernels/chat/jinja/jinja_methods.h"
#include "kernels/chat/jinja/js_text.h"
#include "kernels/chat/jinja/lazy_sequence.h"

namespace evald::kernels::jinja {

namespace {

bool IsNumericLike(const Value& v) {
  return v.IsNumber() || v.kind == Kind::kBoolean;
}
double NumericValue(const Value& v) {
  return v.kind == Kind::kBoolean ? v.boolean : v.number;
}

// Python keeps the sign of the divisor in %, JavaScript that of the dividend; both raise or
// return infinity on zero where the other does not.
// A float remainder of zero keeps the divisor's sign in Python (-0.0).
void CheckArithmeticAgrees(const std::string& op, double a, double b, bool is_float) {
  if ((op == "/" || op == "//" || op == "%") && b == 0) Unsupported("division by zero");
  if (op == "%" && (std::fmod(a, b) != 0 || is_float) && (a < 0) != (b < 0))
    Unsupported("% with operands of different signs");
}

// ~ writes str() of each side in Python, String() in JavaScript.
std::string ConcatenationText(const Value& v, WorkBudget& budget) {
  if (v.kind == Kind::kUndefined) return "";
  if (v.kind == Kind::kFloat && std::fmod(v.number, 1.0) == 0)
    Unsupported("an integral float converted to a string (Python writes 1.0, the reference 1)");
  CheckPythonPrintsTheSame(v, "~");
  return JsString(v, budget);
}

}  // namespace

std::string Interpreter::Run(const NodeList& program, Environment* globals) {
  std::string out;
  if (RenderBlock(program, globals, &out) != Flow::kNormal)
    TemplateError("break or continue outside a loop");
  return out;
}

void Interpreter::Append(std::string* out, const std::string& text) {
  budget_.Charge(static_cast<int64_t>(text.size()));
  *out += text;
}

Interpreter::Flow Interpreter::RenderBlock(const NodeList& statements, Environment* env,
                                           std::string* out) {
  for (const auto& s : statements) {
    budget_.Charge(1);
    switch (s->kind) {
      case NodeKind::kString:
        Append(out, s->text);
        break;
      case NodeKind::kIf: {
        Flow f = RenderIf(*s, env, out);
        if (f != Flow::kNormal) return f;
        break;
      }
      case NodeKind::kFor:
        RenderFor(*s, env, out);
        break;
      case NodeKind::kSet:
        ExecuteSet(*s, env);
        break;
      case NodeKind::kComment:
        break;
      case NodeKind::kBreak:
        return Flow::kBreak;
      case NodeKind::kContinue:
        return Flow::kContinue;
      default: {
        Value v = Evaluate(*s, env);
        if (v.kind == Kind::kUndefined) break;
        // The reference writes nothing for none; Python writes "None".
        if (v.kind == Kind::kNull && s->kind != NodeKind::kMacro && s->kind != NodeKind::kSet &&
            s->kind != NodeKind::kComment)
          Unsupported("none written as text (Python writes None, the reference nothing)");
        if (v.kind == Kind::kNull) break;
        CheckPythonPrintsTheSame(v, "{{ }}");
        Append(out, PrintedText(v, budget_));
      }
    }
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::RenderIf(const Node& node, Environment* env, std::string* out) {
  return RenderBlock(Evaluate(*node.a, env).Truthy() ? node.body : node.alternate, env, out);
}

// The body of a macro, a {% set %} block or a {% filter %} block, where a break or continue
// has no loop of its own to end.
std::string Interpreter::RenderToString(const NodeList& body, Environment* env, const char* where) {
  std::string out;
  if (RenderBlock(body, env, &out) != Flow::kNormal)
    Unsupported(std::string("break or continue inside ") + where);
  return out;
}

// A {% set %} or {% filter %} block's body: a scope of its own in Python, none in the reference,
// so what it sets is refused to the code after it (Environment::stale).
std::string Interpreter::RenderBlockScope(const NodeList& body, Environment* env,
                                          const char* where) {
  Environment* inner = heap_.NewEnvironment(env);
  std::string out = RenderToString(body, inner, where);
  for (const auto& entry : inner->variables) env->Forget(entry.first);
  return out;
}

void Interpreter::ExecuteSet(const Node& node, Environment* env) {
  Value rhs = node.b ? Evaluate(*node.b, env)
                     : Value::String(RenderBlockScope(node.body, env, "a {% set %} block"));
  const Node& target = *node.a;
  if (target.kind == NodeKind::kIdentifier) {
    env->Set(target.text, rhs);
  } else if (target.kind == NodeKind::kTuple) {
    if (rhs.IsLazy()) RefuseLazy(rhs, "unpacking in set");
    if (!rhs.IsArray()) TemplateError("cannot unpack a non-iterable type in set");
    if (rhs.list->size() != target.items.size())
      TemplateError(rhs.list->size() < target.items.size() ? "too few items to unpack in set"
                                                           : "too many items to unpack in set");
    for (size_t i = 0; i < target.items.size(); ++i) {
      if (target.items[i]->kind != NodeKind::kIdentifier)
        TemplateError("cannot unpack to a non-identifier in set");
      env->Set(target.items[i]->text, (*rhs.list)[i]);
    }
  } else if (target.kind == NodeKind::kMember) {
    Value object = Evaluate(*target.a, env);
    if (object.kind != Kind::kNamespace)
      TemplateError("cannot assign an attribute of a non-namespace object");
    if (target.b->kind != NodeKind::kIdentifier || target.flag)
      TemplateError("cannot assign to a member with a non-identifier property");
    object.map->Set(target.b->text, rhs);
  } else {
    TemplateError("invalid left-hand side of an assignment");
  }
}

void Interpreter::BindMacroArguments(const Node& macro, std::vector<Value> args,
                                     Environment* scope) {
  ValueMap keywords;
  if (!args.empty() && args.back().kind == Kind::kKeywordArgs) {
    keywords = *args.back().map;
    args.pop_back();
  }
  std::vector<std::pair<std::string, const Node*>> pending_defaults;
  size_t keywords_used = 0;
  for (size_t i = 0; i < macro.items.size(); ++i) {
    const Node& p = *macro.items[i];
    const std::string& name = p.kind == NodeKind::kIdentifier ? p.text : p.a->text;
    Value value;
    bool given = i < args.size();
    if (given) {
      value = args[i];
    } else if (const Value* kw = keywords.Find(name)) {
      value = *kw;
      given = true;
      ++keywords_used;
    }
    if (!given && p.kind == NodeKind::kKeywordArgument)
      pending_defaults.emplace_back(name, p.b.get());
    scope->Set(name, value);
  }
  if (keywords_used < keywords.size())
    TemplateError("macro '" + macro.a->text + "' got an unexpected keyword argument");
  if (args.size() > macro.items.size())
    TemplateError("macro '" + macro.a->text + "' takes not more than " +
                  std::to_string(macro.items.size()) + " argument(s)");
  for (const auto& [name, default_value] : pending_defaults)
    scope->Set(name, Evaluate(*default_value, scope));
}

void Interpreter::DefineMacro(const Node& node, Environment* env) {
  const Node* macro = &node;
  env->Set(node.a->text, heap_.NewFunction([this, macro, env](std::vector<Value>& args) {
    if (++depth_ > max_call_depth_)
      Unsupported("macros calling each other more than " + std::to_string(max_call_depth_) +
                  " deep");
    Environment* scope = heap_.NewEnvironment(env);
    BindMacroArguments(*macro, args, scope);
    std::string text = RenderToString(macro->body, scope, "a macro");
    --depth_;
    return Value::String(std::move(text));
  }));
}

std::pair<std::vector<Value>, ValueMap> Interpreter::SplitArguments(const NodeList& args,
                                                                    Environment* env) {
  std::vector<Value> positional;
  ValueMap keywords;
  auto add_keyword = [&](const std::string& key, Value v) {
    if (keywords.Find(key)) TemplateError("got multiple values for keyword argument '" + key + "'");
    keywords.Set(key, std::move(v));
  };
  for (const auto& a : args) {
    if (a->kind == NodeKind::kSpread) {
      Value v = Evaluate(*a->a, env);
      if (v.IsLazy()) RefuseLazy(v, "unpacking into arguments");
      if (!v.IsArray())
        TemplateError(std::string("cannot unpack non-iterable type: ") + v.TypeName());
      for (const Value& item : *v.list) positional.push_back(item);
    } else if (a->kind != NodeKind::kKeywordArgument && a->kind != NodeKind::kKeywordSpread) {
      positional.push_back(Evaluate(*a, env));
    }
  }
  for (const auto& a : args) {
    if (a->kind == NodeKind::kKeywordArgument) {
      add_keyword(a->a->text, Evaluate(*a->b, env));
    } else if (a->kind == NodeKind::kKeywordSpread) {
      Value v = Evaluate(*a->a, env);
      if (!v.IsObject()) TemplateError("argument after ** must be a mapping");
      for (const auto& [k, item] : v.map->entries()) add_keyword(k, item);
    }
  }
  return {std::move(positional), std::move(keywords)};
}

std::vector<Value> Interpreter::CallArguments(const NodeList& args, Environment* env) {
  auto [positional, keywords] = SplitArguments(args, env);
  if (keywords.size() > 0)
    positional.push_back(heap_.NewMap(Kind::kKeywordArgs, std::move(keywords)));
  return positional;
}

Value Interpreter::Call(const Node& node, Environment* env) {
  std::vector<Value> args = CallArguments(node.items, env);
  Value fn = Evaluate(*node.a, env);
  if (fn.kind != Kind::kFunction)
    TemplateError(std::string("cannot call something that is not a function: got ") +
                  fn.TypeName());
  return (*fn.function)(args);
}

Value Interpreter::Slice(const Value& object, const Node& slice, Environment* env) {
  if (object.IsLazy()) RefuseLazy(object, "a slice");
  if (!object.IsArray() && object.kind != Kind::kString)
    TemplateError("slice object must be an array or string");
  const Node* parts[3] = {slice.a.get(), slice.b.get(), slice.c.get()};
  std::optional<double> bound[3];
  for (int i = 0; i < 3; ++i) {
    Value v = parts[i] ? Evaluate(*parts[i], env) : Value::Undefined();
    if (v.kind == Kind::kInteger)
      bound[i] = v.number;
    else if (v.kind != Kind::kUndefined)
      TemplateError("slice bounds must be integers or undefined");
  }
  std::vector<std::string_view> chars;
  if (object.kind == Kind::kString) chars = CodePoints(object.str());
  const double length = object.kind == Kind::kString ? static_cast<double>(chars.size())
                                                     : static_cast<double>(object.list->size());
  const double step = bound[2].value_or(1);
  if (step == 0) Unsupported("a slice step of zero");
  double start, stop;
  if (step > 0) {
    start = bound[0].value_or(0);
    start = start < 0 ? std::max(length + start, 0.0) : std::min(start, length);
    stop = bound[1].value_or(length);
    stop = stop < 0 ? std::max(length + stop, 0.0) : std::min(stop, length);
  } else {
    start = bound[0].value_or(length - 1);
    start = start < 0 ? std::max(length + start, -1.0) : std::min(start, length - 1);
    stop = bound[1].value_or(-1);
    stop = stop < -1 ? std::max(length + stop, -1.0) : std::min(stop, length - 1);
  }
  const double direction = step > 0 ? 1 : -1;
  std::string text;
  ValueList items;
  for (double i = start; direction * i < direction * stop; i += step) {
    budget_.Charge(1);
    const auto k = static_cast<size_t>(i);
    if (object.kind == Kind::kString)
      text += chars[k];
    else
      items.push_back((*object.list)[k]);
  }
  if (object.kind == Kind::kString) {
    Value part = Value::String(std::move(text));
    part.py_markup = object.py_markup;  // Markup's [] gives a Markup
    return part;
  }
  return heap_.NewList(Kind::kArray, std::move(items));
}

Value Interpreter::Member(const Node& node, Environment* env) {
  Value object = Evaluate(*node.a, env);
  const Node& prop_node = *node.b;
  Value property;
  if (node.flag) {
    if (prop_node.kind == NodeKind::kSlice) return Slice(object, prop_node, env);
    property = Evaluate(prop_node, env);
  } else if (prop_node.kind == NodeKind::kInteger) {
    property = Value::Integer(prop_node.number);
  } else {
    property = Value::String(prop_node.text);
  }
  if (object.IsLazy()) RefuseLazy(object, "an index or attribute");
  if (object.kind == Kind::kLoop) {
    const Value* v = property.kind == Kind::kString ? object.map->Find(property.str()) : nullptr;
    if (!v)
      Unsupported("loop[...] or loop." + JsString(property, budget_) + " (not in both engines)");
    return *v;
  }
  if (object.kind == Kind::kUndefined)
    Unsupported(
        "an attribute of an undefined value (Python's Jinja raises, the reference gives "
        "undefined)");
  if (object.IsAttributeContainer()) {
    if (property.kind != Kind::kString)
      TemplateError(std::string("cannot access a property with a non-string: got ") +
                    property.TypeName());
    if (const Value* v = object.map->Find(property.str())) return *v;
    return object.IsObject() ? BuiltinMember(*this, object, property.str()) : Value::Undefined();
  }
  if (object.IsArray() || object.kind == Kind::kString) {
    if (property.kind == Kind::kInteger) {
      double i = std::trunc(property.number);
      if (object.kind == Kind::kString) {
        const std::vector<std::string_view> chars = CodePoints(object.str());
        if (Utf16Length(object.str()) != chars.size())
          Unsupported("indexing a string with characters outside the Basic Multilingual Plane");
        const double n = static_cast<double>(chars.size());
        if (i < 0) i += n;
        if (!(i >= 0 && i < n)) return Value::Undefined();  // NaN too
        Value c = Value::String(std::string(chars[static_cast<size_t>(i)]));
        c.py_markup = object.py_markup;  // Markup's [] gives a Markup
        return c;
      }
      const double n = static_cast<double>(object.list->size());
      if (i < 0) i += n;
      if (!(i >= 0 && i < n)) return Value::Undefined();  // NaN too
      return (*object.list)[static_cast<size_t>(i)];
    }
    if (property.kind == Kind::kString) return BuiltinMember(*this, object, property.str());
    TemplateError(std::string("cannot access a property with a non-string/non-number: got ") +
                  property.TypeName());
  }
  if (property.kind != Kind::kString)
    TemplateError(std::string("cannot access a property with a non-string: got ") +
                  property.TypeName());
  return Value::Undefined();
}

Value Interpreter::Unary(const Node& node, Environment* env) {
  Value arg = Evaluate(*node.a, env);
  if (node.text == "not") return Value::Boolean(!arg.Truthy());
  if (!IsNumericLike(arg))
    TemplateError("unknown operator '" + node.text + "' for " + arg.TypeName());
  double v = (node.text == "-" ? -1 : 1) * NumericValue(arg);
  return arg.kind == Kind::kFloat ? Value::Float(v) : Value::Integer(v);
}

Value Interpreter::Binary(const Node& node, Environment* env) {
  const std::string& op = node.text;
  Value left = Evaluate(*node.a, env);
  if (op == "and") return left.Truthy() ? Evaluate(*node.b, env) : left;
  if (op == "or") return left.Truthy() ? left : Evaluate(*node.b, env);
  Value right = Evaluate(*node.b, env);
  if (left.IsLazy() || right.IsLazy()) return LazyOperation(op, left, right);
  if (left.kind == Kind::kLoop || right.kind == Kind::kLoop)
    Unsupported("the " + op + " operator on a loop object (a LoopContext in Python)");
  if (op == "==") return Value::Boolean(LooseEquals(left, right));
  if (op == "!=") return Value::Boolean(!LooseEquals(left, right));
  if (left.IsNumber() && right.IsNumber() && op != "~" && op != "**") {
    const double a = left.number, b = right.number;
    const bool is_float = left.kind == Kind::kFloat || right.kind == Kind::kFloat;
    auto number = [&](double r) { return is_float ? Value::Float(r) : Value::Integer(r); };
    CheckArithmeticAgrees(op, a, b, is_float);
    if (op == "+") return number(a + b);
    if (op == "-") return number(a - b);
    if (op == "*") return number(a * b);
    if (op == "/") return Value::Float(a / b);
    if (op == "//") return number(std::floor(a / b));
    if (op == "%") return number(std::fmod(a, b));
    if (op == "<") return Value::Boolean(a < b);
    if (op == ">") return Value::Boolean(a > b);
    if (op == ">=") return Value::Boolean(a >= b);
    if (op == "<=") return Value::Boolean(a <= b);
  } else if (left.kind == Kind::kUndefined || right.kind == Kind::kUndefined) {
    if (right.kind == Kind::kUndefined && (op == "in" || op == "not in"))
      return Value::Boolean(op == "not in");
    if (op == "~" && left.kind != Kind::kNull && right.kind != Kind::kNull)
      return Value::String(ConcatenationText(left, budget_) + ConcatenationText(right, budget_));
    TemplateError("cannot perform operation " + op + " on undefined values");
  } else if (left.kind == Kind::kNull || right.kind == Kind::kNull) {
    TemplateError("cannot perform operation on null values");
  } else if (op == "~") {
    std::string text = ConcatenationText(left, budget_) + ConcatenationText(right, budget_);
    budget_.Charge(static_cast<int64_t>(text.size()));
    return Value::String(std::move(text));
  } else if (op == "**" && IsNumericLike(left) && IsNumericLike(right)) {
    Unsupported("the ** operator (its rounding is the JavaScript engine's)");
  } else if (left.IsArray() && right.IsArray()) {
    if (op == "+") {
      if (left.kind != right.kind || left.py_tuple != right.py_tuple)
        Unsupported("a list and a tuple added together");
      ValueList joined = *left.list;
      joined.insert(joined.end(), right.list->begin(), right.list->end());
      budget_.Charge(static_cast<int64_t>(joined.size()));
      Value sum = heap_.NewList(left.kind, std::move(joined));  // a tuple and a tuple: a tuple
      sum.py_tuple = left.py_tuple;
      return sum;
    }
  } else if (right.IsArray()) {
    bool member = false;
    for (const Value& x : *right.list) member = member || StrictEquals(x, left);
    if (op == "in") return Value::Boolean(member);
    if (op == "not in") return Value::Boolean(!member);
  }
  if (left.kind == Kind::kString || right.kind == Kind::kString) {
    if (op == "+") {
      if (left.kind != right.kind)
        Unsupported("+ between a string and a " +
                    std::string(left.kind == Kind::kString ? right.TypeName() : left.TypeName()) +
                    " (Python raises, the reference concatenates)");
      // A Markup's + HTML-escapes a plain string on either side.
      const Value& plain = left.py_markup ? right : left;
      if (left.py_markup != right.py_markup && HasHtmlSpecial(plain.str()))
        Unsupported("+ between a |safe string and text Python HTML-escapes");
      std::string text = left.str() + right.str();
      budget_.Charge(static_cast<int64_t>(text.size()));
      Value sum = Value::String(std::move(text));
      sum.py_markup = left.py_markup || right.py_markup;
      return sum;
    }
  }
  if (left.kind == Kind::kString && right.kind == Kind::kString) {
    if (op == "in") return Value::Boolean(right.str().find(left.str()) != std::string::npos);
    if (op == "not in") return Value::Boolean(right.str().find(left.str()) == std::string::npos);
  }
  if (left.kind == Kind::kString && right.IsObject()) {
    if (op == "in") return Value::Boolean(right.map->Find(left.str()) != nullptr);
    if (op == "not in") return Value::Boolean(right.map->Find(left.str()) == nullptr);
  }
  TemplateError("unknown operator \"" + op + "\" between " + left.TypeName() + " and " +
                right.TypeName());
}

Value Interpreter::Literal(const Node& node, Environment* env) {
  if (node.kind == NodeKind::kObject) {
    ValueMap map;
    for (size_t i = 0; i < node.items.size(); ++i) {
      Value key = Evaluate(*node.items[i], env);
      if (key.kind != Kind::kString)
        TemplateError(std::string("object keys must be strings: got ") + key.TypeName());
      map.Set(key.str(), Evaluate(*node.values[i], env));
    }
    return heap_.NewMap(Kind::kObject, std::move(map));
  }
  ValueList items;
  for (const auto& item : node.items) items.push_back(Evaluate(*item, env));
  return heap_.NewList(node.kind == NodeKind::kTuple ? Kind::kTuple : Kind::kArray,
                       std::move(items));
}

Value Interpreter::Evaluate(const Node& node, Environment* env) {
  budget_.Charge(1);
  switch (node.kind) {
    case NodeKind::kIdentifier:
      return env->Lookup(node.text);
    case NodeKind::kInteger:
      return Value::Integer(node.number);
    case NodeKind::kFloat:
      return Value::Float(node.number);
    case NodeKind::kString:
      return Value::String(node.text);
    case NodeKind::kArray:
    case NodeKind::kTuple:
    case NodeKind::kObject:
      return Literal(node, env);
    case NodeKind::kBinary:
      return Binary(node, env);
    case NodeKind::kUnary:
      return Unary(node, env);
    case NodeKind::kFilter:
      return ApplyFilter(*this, Evaluate(*node.a, env), *node.b, env);
    case NodeKind::kTest:
      return Value::Boolean(RunTest(node.b->text, Evaluate(*node.a, env), Value::Undefined()) !=
                            node.flag);
    case NodeKind::kSelect:
      return Evaluate(*node.b, env).Truthy() ? Evaluate(*node.a, env) : Value::Undefined();
    case NodeKind::kTernary:
      return Evaluate(*node.a, env).Truthy() ? Evaluate(*node.b, env) : Evaluate(*node.c, env);
    case NodeKind::kCall:
      return Call(node, env);
    case NodeKind::kMember:
      return Member(node, env);
    case NodeKind::kSet:
      ExecuteSet(node, env);
      return Value::Null();
    case NodeKind::kMacro:
      DefineMacro(node, env);
      return Value::Null();
    case NodeKind::kFilterBlock:
      return ApplyFilter(*this,
                         Value::String(RenderBlockScope(node.body, env, "a {% filter %} block")),
                         *node.a, env);
    case NodeKind::kComment:
      return Value::Null();
    default:
      TemplateError("unexpected expression");
  }
}

}  // namespace evald::kernels::jinja
