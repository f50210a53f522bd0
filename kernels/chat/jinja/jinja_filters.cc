#include "kernels/chat/jinja/jinja_filters.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "kernels/chat/jinja/jinja_builtins.h"
#include "kernels/chat/jinja/jinja_format.h"
#include "kernels/chat/jinja/jinja_methods.h"
#include "kernels/chat/jinja/js_text.h"
#include "kernels/chat/jinja/lazy_sequence.h"

namespace evald::kernels::jinja {

namespace {

// A numeric argument as a count within [lo, hi] (NaN as lo).
size_t BoundedCount(double v, double lo, double hi) {
  return static_cast<size_t>(std::isnan(v) ? lo : std::clamp(v, lo, hi));
}

// The text `join` writes for an item (Array.prototype.join of the raw values).
std::string JoinPart(const Value& v) {
  if (v.kind == Kind::kString) return v.str();
  if (v.kind == Kind::kInteger) {
    CheckPythonPrintsTheSame(v, "join");
    return JsNumberToString(v.number);
  }
  Unsupported(std::string("join over a ") + v.TypeName() +
              " (Python and the reference write it differently)");
}

std::string Join(Interpreter& in, const Value& operand, const std::string& separator) {
  WorkBudget& budget = in.budget();
  std::string out;
  if (operand.kind == Kind::kString) {
    bool first = true;
    for (auto cp : CodePoints(operand.str())) {
      if (!first) out += separator;
      first = false;
      out += cp;
      budget.Charge(static_cast<int64_t>(separator.size()) + 1);
    }
    return out;
  }
  const ValueList& items = IterateItems(in, operand);
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += separator;
    out += JoinPart(items[i]);
    budget.Charge(static_cast<int64_t>(separator.size()) + 1);
  }
  return out;
}

void CheckJsonAgrees(const Value& v, int depth) {
  if (depth > 200) Unsupported("values nested more than 200 levels deep");
  if (v.kind == Kind::kUndefined) Unsupported("tojson of an undefined value (Python raises)");
  if (v.IsLazy()) RefuseLazy(v, "tojson");
  if (v.kind == Kind::kLoop) Unsupported("tojson of a loop object");
  if (v.kind == Kind::kFloat) {
    if (std::fmod(v.number, 1.0) == 0)
      Unsupported("tojson of an integral float (Python writes 1.0, the reference 1)");
    CheckPythonPrintsTheSame(v, "tojson");
  }
  if (v.kind == Kind::kInteger) CheckPythonPrintsTheSame(v, "tojson");
  if (v.IsArray())
    for (const Value& x : *v.list) CheckJsonAgrees(x, depth + 1);
  if (v.map)
    for (const auto& e : v.map->entries()) CheckJsonAgrees(e.second, depth + 1);
}

Value ToJsonFilter(Interpreter& in, const Value& operand, const Node* call, Environment* env) {
  JsonOptions o;
  if (call) {
    auto [positional, kwargs] = in.SplitArguments(call->items, env);
    if (!positional.empty()) Unsupported("tojson with positional arguments");
    if (const Value* indent = kwargs.Find("indent")) {
      if (indent->kind != Kind::kInteger && indent->kind != Kind::kNull)
        TemplateError("if set, indent must be a number");
      if (indent->kind == Kind::kInteger && indent->number < 0)
        TemplateError("tojson indent must not be negative");
      if (indent->kind == Kind::kInteger && !(indent->number <= 64))
        Unsupported("tojson with an indent above 64");
      o.indent = indent->kind == Kind::kInteger
                     ? static_cast<int>(BoundedCount(indent->number, 0, 64))
                     : 0;
    }
    if (const Value* ascii = kwargs.Find("ensure_ascii")) {
      if (ascii->kind != Kind::kBoolean) TemplateError("if set, ensure_ascii must be a boolean");
      o.ensure_ascii = ascii->boolean;
    }
    if (const Value* sort = kwargs.Find("sort_keys")) {
      if (sort->kind != Kind::kBoolean) TemplateError("if set, sort_keys must be a boolean");
      if (sort->boolean) Unsupported("tojson(sort_keys=true) (the reference sorts by locale)");
    }
    if (const Value* seps = kwargs.Find("separators")) {
      if (seps->IsArray()) {
        if (seps->list->size() != 2 || (*seps->list)[0].kind != Kind::kString ||
            (*seps->list)[1].kind != Kind::kString)
          TemplateError("separators must be a tuple of two strings");
        o.separators = std::make_pair((*seps->list)[0].str(), (*seps->list)[1].str());
      } else if (seps->kind != Kind::kNull) {
        TemplateError("if set, separators must be a tuple of two strings");
      }
    }
  }
  CheckJsonAgrees(operand, 0);
  std::string json = ToJson(operand, o, in.budget());
  in.budget().Charge(static_cast<int64_t>(json.size()));
  return Value::String(std::move(json));
}

// A string filter's number conversion: only plain integer (and decimal) literals, where
// Python's int()/float() and JavaScript's parseInt/parseFloat agree.
Value NumberFromString(const std::string& s, bool integer, const Value& fallback) {
  std::string_view t = JsTrim(s);
  size_t i = (!t.empty() && (t[0] == '+' || t[0] == '-')) ? 1 : 0, digits = 0, dots = 0;
  for (size_t k = i; k < t.size(); ++k) {
    if (t[k] >= '0' && t[k] <= '9')
      ++digits;
    else if (t[k] == '.' && !integer)
      ++dots;
    else
      digits = 0, k = t.size();
  }
  if (t.empty()) return fallback;
  if (digits == 0 || dots > 1 || t.back() == '.' || t[i] == '.')
    Unsupported("int/float of '" + std::string(t.substr(0, 40)) +
                "' (Python and the reference parse it differently)");
  double v = integer ? JsParseInt(s) : JsParseFloat(s);
  return integer ? Value::Integer(v) : Value::Float(v);
}

// Jinja2's title filter, which is not str.title(): words split at runs of white space, '-',
// '(', '{', '[' and '<' only, each word's first character upper-cased and the rest lowered.
Value TitleFilter(const std::string& s) {
  const std::string js = JsTitle(s);
  auto separates = [](char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || c == '-' || c == '(' || c == '{' || c == '[' ||
           c == '<';
  };
  std::string py = s;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool starts_word = !separates(s[i]) && (i == 0 || separates(s[i - 1]));
    py[i] = starts_word ? AsciiUpper(s.substr(i, 1))[0] : AsciiLower(s.substr(i, 1))[0];
  }
  if (js != py)
    Unsupported("the title filter on '" + s.substr(0, 40) + "' (Python and the reference differ)");
  return Value::String(js);
}

Value Indent(const std::string& s, const std::string& indent, bool first, bool blank,
             WorkBudget& budget) {
  // Python splits lines at these too (U+0085, U+2028 and U+2029 in UTF-8); the reference at \n.
  for (std::string_view other :
       {"\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\xc2\x85", "\xe2\x80\xa8", "\xe2\x80\xa9"})
    if (s.find(other) != std::string::npos)
      Unsupported("indent of text with line breaks other than \\n");
  // Python indents the first line when asked even where it is empty; the reference does not.
  if (first && !blank && (s.empty() || s[0] == '\n'))
    Unsupported("indent(first=true) of text whose first line is empty");
  std::string out;
  size_t start = 0, line = 0;
  while (true) {
    size_t end = s.find('\n', start);
    std::string_view piece = std::string_view(s).substr(
        start, end == std::string::npos ? std::string::npos : end - start);
    if (!((!first && line == 0) || (!blank && piece.empty()))) out += indent;
    out += piece;
    budget.Charge(static_cast<int64_t>(indent.size() + piece.size()) + 1);
    if (end == std::string::npos) break;
    out += '\n';
    start = end + 1;
    ++line;
  }
  return Value::String(std::move(out));
}

Value SelectAttr(Interpreter& in, const Value& list, const Node& call, Environment* env,
                 bool select) {
  const std::string& name = call.a->text;
  const ValueList& items = IterateItems(in, list);
  for (const Value& item : items)
    if (!item.IsAttributeContainer())
      TemplateError(name + " can only be applied to an array of objects");
  for (const auto& a : call.items)
    if (a->kind != NodeKind::kString) TemplateError("arguments of " + name + " must be strings");
  std::vector<Value> args;
  for (const auto& a : call.items) args.push_back(in.Evaluate(*a, env));
  if (args.empty()) TemplateError(name + " needs an attribute");
  const std::string test = args.size() > 1 ? args[1].str() : "";
  if (test == "undefined") Unsupported(name + " with the undefined test");
  ValueList out;
  for (const Value& item : items) {
    in.budget().Charge(1);
    const Value* a = item.map->Find(args[0].str());
    bool result = false;
    if (a)
      result = test.empty() ? a->Truthy()
                            : RunTest(test, *a, args.size() > 2 ? args[2] : Value::Undefined());
    if (result == select) out.push_back(item);
  }
  return AsLazy(in.heap().NewList(Kind::kArray, std::move(out)), true);  // a generator
}

Value AttributeOf(const Value& item, const std::string& path) {
  Value v = item;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (v.IsAttributeContainer()) {
      const Value* found = v.map->Find(part);
      v = found ? *found : Value::Undefined();
    } else if (v.IsArray()) {
      char* end = nullptr;
      long index = std::strtol(part.c_str(), &end, 10);
      if (end == part.c_str() || index < 0 || static_cast<size_t>(index) >= v.list->size())
        return Value::Undefined();
      v = (*v.list)[static_cast<size_t>(index)];
    } else {
      return Value::Undefined();
    }
    if (dot == std::string::npos) return v;
    start = dot + 1;
  }
}

Value SortList(Interpreter& in, const Value& list, const Node* call, Environment* env) {
  Value reverse = Value::Boolean(false), case_sensitive = Value::Boolean(false),
        attribute = Value::Null();
  if (call) {
    auto [args, kwargs] = in.SplitArguments(call->items, env);
    reverse = ArgOr(args, kwargs, 0, "reverse", reverse);
    case_sensitive = ArgOr(args, kwargs, 1, "case_sensitive", case_sensitive);
    attribute = ArgOr(args, kwargs, 2, "attribute", attribute);
  }
  if (reverse.kind != Kind::kBoolean) TemplateError("reverse must be a boolean");
  if (case_sensitive.kind != Kind::kBoolean) TemplateError("case_sensitive must be a boolean");
  if (attribute.kind != Kind::kString && attribute.kind != Kind::kInteger &&
      attribute.kind != Kind::kNull)
    TemplateError("attribute must be a string, integer, or null");
  auto key = [&](const Value& item) {
    if (attribute.kind == Kind::kNull) return item;
    return AttributeOf(item, attribute.kind == Kind::kInteger ? JsNumberToString(attribute.number)
                                                              : attribute.str());
  };
  ValueList sorted = IterateItems(in, list);
  in.budget().Charge(static_cast<int64_t>(sorted.size()) * 4);
  std::stable_sort(sorted.begin(), sorted.end(), [&](const Value& a, const Value& b) {
    int r = CompareValues(key(a), key(b), case_sensitive.boolean);
    return reverse.boolean ? r > 0 : r < 0;
  });
  return in.heap().NewList(Kind::kArray, std::move(sorted));
}

Value MapAttribute(Interpreter& in, const Value& list, const Node& call, Environment* env) {
  auto [args, kwargs] = in.SplitArguments(call.items, env);
  const Value* attr = kwargs.Find("attribute");
  if (!attr) TemplateError("`map` expressions without `attribute` set are not supported");
  if (attr->kind != Kind::kString) TemplateError("attribute must be a string");
  const Value* fallback = kwargs.Find("default");
  ValueList out;
  for (const Value& item : IterateItems(in, list)) {
    if (!item.IsAttributeContainer()) TemplateError("items in map must be an object");
    Value v = AttributeOf(item, attr->str());
    out.push_back(v.kind == Kind::kUndefined && fallback ? *fallback : v);
  }
  in.budget().Charge(static_cast<int64_t>(out.size()));
  return AsLazy(in.heap().NewList(Kind::kArray, std::move(out)), true);  // a generator
}

Value Unique(Interpreter& in, const Value& list) {
  ValueList out;
  std::set<std::string> seen, seen_lower;
  for (const Value& item : IterateItems(in, list)) {
    if (item.kind != Kind::kString) Unsupported("unique over values other than strings");
    if (seen.insert(item.str()).second) {
      if (!seen_lower.insert(AsciiLower(RequireAscii(item.str(), "unique"))).second)
        Unsupported("unique over strings that differ only in case (Python ignores case)");
      out.push_back(item);
    }
  }
  return AsLazy(in.heap().NewList(Kind::kArray, std::move(out)), true);  // a generator
}

Value ArrayFilter(Interpreter& in, const Value& operand, const std::string& name) {
  const ValueList& list = *operand.list;
  if (name == "list") return operand;
  if (name == "first" || name == "last") {
    if (list.empty()) Unsupported(name + " of an empty list");
    return name == "first" ? list.front() : list.back();
  }
  if (name == "length") return Value::Integer(static_cast<double>(list.size()));
  if (name == "reverse")  // Python's reversed(): an iterator
    return AsLazy(in.heap().NewList(Kind::kArray, ValueList(list.rbegin(), list.rend())), true);
  if (name == "sort") return SortList(in, operand, nullptr, nullptr);
  if (name == "join") return Value::String(Join(in, operand, ""));
  if (name == "unique") return Unique(in, operand);
  if (name == "string") Unsupported("the string filter on a list (Python writes its repr)");
  TemplateError("unknown ArrayValue filter: " + name);
}

Value StringFilter(Interpreter& in, const Value& operand, const std::string& name) {
  const std::string& s = operand.str();
  std::vector<Value> none;
  if (name == "length") {
    size_t units = Utf16Length(s);
    if (units != CodePoints(s).size())
      Unsupported("length of text with characters outside the Basic Multilingual Plane");
    return Value::Integer(static_cast<double>(units));
  }
  if (name == "title") return TitleFilter(s);
  if (name == "upper" || name == "lower" || name == "capitalize")
    return StringMethod(in, operand, name, none);
  if (name == "trim") {
    std::string js(JsTrim(s));
    if (js != PyStrip(s, nullptr, true, true))
      Unsupported("trim of text whose edge Python and the reference read differently");
    return Value::String(std::move(js));
  }
  if (name == "indent") return Indent(s, "    ", false, false, in.budget());
  if (name == "join" || name == "string") return operand;
  if (name == "int") return NumberFromString(s, true, Value::Integer(0));
  if (name == "float") return NumberFromString(s, false, Value::Float(0));
  TemplateError("unknown StringValue filter: " + name);
}

Value ScalarFilter(const Value& operand, const std::string& name) {
  if (operand.IsNumber()) {
    if (name == "abs")
      return operand.kind == Kind::kInteger ? Value::Integer(std::fabs(operand.number))
                                            : Value::Float(std::fabs(operand.number));
    if (name == "int") return Value::Integer(std::trunc(operand.number) + 0.0);
    if (name == "float") return Value::Float(operand.number);
    if (name == "string") {
      CheckPythonPrintsTheSame(operand, "string");
      return Value::String(operand.kind == Kind::kFloat ? JsFloatToString(operand.number)
                                                        : JsNumberToString(operand.number));
    }
    TemplateError("unknown NumericValue filter: " + name);
  }
  if (name == "int") return Value::Integer(operand.boolean ? 1 : 0);
  if (name == "float") return Value::Float(operand.boolean ? 1 : 0);
  if (name == "string") Unsupported("the string filter on a boolean (Python writes True/False)");
  TemplateError("unknown BooleanValue filter: " + name);
}

Value NamedFilter(Interpreter& in, const Value& operand, const std::string& name) {
  if (name == "safe") {
    if (operand.kind != Kind::kString)  // Python's Markup(value) is a string, the reference's not
      Unsupported(std::string("the safe filter on a ") + operand.TypeName());
    Value markup = operand;
    markup.py_markup = true;
    return markup;
  }
  if (name == "tojson") return ToJsonFilter(in, operand, nullptr, nullptr);
  if (name == "bool") Unsupported("the bool filter (Python's Jinja2 has none)");
  if (operand.IsArray()) return ArrayFilter(in, operand, name);
  if (operand.IsLazy()) {
    if (name == "join") return Value::String(Join(in, operand, ""));
    if (name == "sort") return SortList(in, operand, nullptr, nullptr);
    if (name == "unique") return Unique(in, operand);
    return LazyFilter(in, operand, name);
  }
  if (operand.kind == Kind::kString) {
    // Python's string filters keep a Markup a Markup (soft_str, then its own methods).
    Value result = StringFilter(in, operand, name);
    if (operand.py_markup && name != "join" && name != "int" && name != "float")
      KeepMarkup(&result);
    return result;
  }
  if (operand.IsNumber() || operand.kind == Kind::kBoolean) return ScalarFilter(operand, name);
  if (operand.IsObject()) {
    if (name == "items") return AsLazy(PairList(in, *operand.map), true);  // a generator
    if (name == "length") return Value::Integer(static_cast<double>(operand.map->size()));
    if (name == "dictsort") return DictSort(in, *operand.map, {});
    Unsupported("the " + name + " filter on a mapping");
  }
  TemplateError("cannot apply filter \"" + name + "\" to type: " + operand.TypeName());
}

Value CalledFilter(Interpreter& in, const Value& operand, const Node& call, Environment* env) {
  if (call.a->kind != NodeKind::kIdentifier) TemplateError("unknown filter");
  const std::string& name = call.a->text;
  if (name == "tojson") return ToJsonFilter(in, operand, &call, env);
  if (name == "join") {
    if (!operand.IsArray() && !operand.IsLazy() && operand.kind != Kind::kString)
      TemplateError("cannot apply filter \"join\" to type: " + std::string(operand.TypeName()));
    auto [args, kwargs] = in.SplitArguments(call.items, env);
    if (kwargs.size() > 0) Unsupported("join with keyword arguments");
    Value sep = args.empty() ? Value::String("") : args[0];
    if (sep.kind != Kind::kString) TemplateError("separator must be a string");
    return Value::String(Join(in, operand, sep.str()));
  }
  if (name == "int" || name == "float") {
    auto [args, kwargs] = in.SplitArguments(call.items, env);
    const Value* kw = kwargs.Find("default");
    Value fallback = !args.empty()   ? args[0]
                     : kw            ? *kw
                     : name == "int" ? Value::Integer(0)
                                     : Value::Float(0);
    if (operand.kind == Kind::kString)
      return NumberFromString(operand.str(), name == "int", fallback);
    if (operand.IsNumber() || operand.kind == Kind::kBoolean) return ScalarFilter(operand, name);
    TemplateError("cannot apply filter \"" + name + "\" to type: " + operand.TypeName());
  }
  if (name == "default") {
    auto [args, kwargs] = in.SplitArguments(call.items, env);
    Value fallback = !args.empty() ? args[0] : Value::String("");
    const Value* kw = kwargs.Find("boolean");
    Value boolean = args.size() > 1 ? args[1] : kw ? *kw : Value::Boolean(false);
    if (boolean.kind != Kind::kBoolean) TemplateError("`default` filter flag must be a boolean");
    if (operand.kind == Kind::kUndefined || (boolean.boolean && !operand.Truthy())) return fallback;
    return operand;
  }
  if (operand.IsArray() || operand.IsLazy()) {
    if (name == "sort") return SortList(in, operand, &call, env);
    if (name == "selectattr" || name == "rejectattr")
      return SelectAttr(in, operand, call, env, name == "selectattr");
    if (name == "map") return MapAttribute(in, operand, call, env);
    if (operand.IsLazy()) RefuseLazy(operand, "the " + name + " filter");
    TemplateError("unknown ArrayValue filter: " + name);
  }
  if (operand.kind == Kind::kString) {
    if (name == "indent") {
      auto [args, kwargs] = in.SplitArguments(call.items, env);
      Value width = ArgOr(args, kwargs, 0, "width", Value::Integer(4));
      if (width.kind != Kind::kInteger && width.kind != Kind::kString)
        TemplateError("width must be an integer or a string");
      std::string unit = width.kind == Kind::kString
                             ? width.str()
                             : std::string(BoundedCount(width.number, 0, 256), ' ');
      if (operand.py_markup && width.kind == Kind::kString && HasHtmlSpecial(width.str()))
        Unsupported("indent of a |safe string by text Python HTML-escapes");
      Value result = Indent(
          operand.str(), unit, ArgOr(args, kwargs, 1, "first", Value::Boolean(false)).Truthy(),
          ArgOr(args, kwargs, 2, "blank", Value::Boolean(false)).Truthy(), in.budget());
      result.py_markup = operand.py_markup;
      return result;
    }
    if (name == "replace") {
      std::vector<Value> args = in.CallArguments(call.items, env);
      return StringMethod(in, operand, "replace", args);
    }
    TemplateError("unknown StringValue filter: " + name);
  }
  if (operand.IsObject()) {
    if (name == "dictsort") return DictSort(in, *operand.map, in.CallArguments(call.items, env));
    Unsupported("the " + name + " filter on a mapping");
  }
  TemplateError("cannot apply filter \"" + name + "\" to type: " + operand.TypeName());
}

}  // namespace

Value ApplyFilter(Interpreter& in, const Value& operand, const Node& filter, Environment* env) {
  in.budget().Charge(1);
  if (operand.kind == Kind::kLoop)
    Unsupported("a filter on a loop object (a LoopContext in Python)");
  if (filter.kind == NodeKind::kIdentifier) return NamedFilter(in, operand, filter.text);
  if (filter.kind == NodeKind::kCall) return CalledFilter(in, operand, filter, env);
  TemplateError("unknown filter");
}

}  // namespace evald::kernels::jinja
