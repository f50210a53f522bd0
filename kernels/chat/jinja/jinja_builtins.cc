#include "kernels/chat/jinja/jinja_builtins.h"

#include <cmath>
#include <set>

#include "kernels/chat/jinja/jinja_format.h"
#include "kernels/chat/jinja/jinja_methods.h"
#include "kernels/chat/jinja/js_text.h"
#include "kernels/chat/jinja/lazy_sequence.h"

namespace evald::kernels::jinja {

namespace {

constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

// Python's str.islower()/isupper(): at least one cased character, all of it in that case.
bool PyIsCase(const std::string& s, bool lower) {
  bool cased = false;
  for (char c : s) {
    if (!IsAsciiLetter(c)) continue;
    cased = true;
    if (lower != (c >= 'a' && c <= 'z')) return false;
  }
  return cased;
}

bool TestCase(const Value& v, bool lower) {
  if (v.IsArray() || v.map || v.kind == Kind::kFunction)
    Unsupported(
        "the lower/upper test on a list, mapping or function (Python tests its printed "
        "text)");
  if (v.kind != Kind::kString) return false;
  const std::string& s = RequireAscii(v.str(), lower ? "the lower test" : "the upper test");
  bool js = s == (lower ? AsciiLower(s) : AsciiUpper(s));
  if (js != PyIsCase(s, lower)) Unsupported("the lower/upper test on text without letters");
  return js;
}

Value Range(std::vector<Value>& args, WorkBudget& budget, Heap& heap) {
  if (args.empty() || args.size() > 3) TemplateError("range() takes 1 to 3 arguments");
  for (const Value& a : args)
    if (a.kind != Kind::kInteger) Unsupported("range() over values other than integers");
  double start = 0, stop = args[0].number, step = 1;
  if (args.size() > 1) start = args[0].number, stop = args[1].number;
  if (args.size() > 2) step = args[2].number;
  if (step == 0) TemplateError("range() step must not be zero");
  ValueList out;
  for (double i = start; step > 0 ? i < stop : i > stop; i += step) {
    budget.Charge(1);
    out.push_back(Value::Integer(i));
  }
  return AsLazy(heap.NewList(Kind::kArray, std::move(out)), false);  // a Python range
}

std::string Strftime(const std::string& format, const std::tm& t) {
  static constexpr const char* kMonths[] = {"January",   "February", "March",    "April",
                                            "May",       "June",     "July",     "August",
                                            "September", "October",  "November", "December"};
  auto pad2 = [](int n) { return (n < 10 ? "0" : "") + std::to_string(n); };
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%' || i + 1 >= format.size()) {
      out += format[i];
      continue;
    }
    const char d = format[++i];
    const std::string month = kMonths[t.tm_mon % 12];
    switch (d) {
      case 'Y':
        out += std::to_string(t.tm_year + 1900);
        break;
      case 'm':
        out += pad2(t.tm_mon + 1);
        break;
      case 'd':
        out += pad2(t.tm_mday);
        break;
      case 'b':
        out += month.substr(0, 3);
        break;
      case 'B':
        out += month;
        break;
      case 'H':
        out += pad2(t.tm_hour);
        break;
      case 'M':
        out += pad2(t.tm_min);
        break;
      case '%':
        out += '%';
        break;
      default:
        Unsupported(std::string("strftime_now's %") + d + " (the reference leaves it as written)");
    }
  }
  return out;
}

Value Namespace(Interpreter& in, std::vector<Value>& args) {
  ValueMap entries;
  std::vector<Value> positional = args;
  const Value* kwargs = nullptr;
  if (!positional.empty() && positional.back().kind == Kind::kKeywordArgs) {
    kwargs = &args.back();
    positional.pop_back();
  }
  if (positional.size() > 1) TemplateError("namespace expected at most 1 argument");
  if (positional.size() == 1) {
    const Value& source = positional[0];
    if (source.IsObject()) {
      for (const auto& [k, v] : source.map->entries()) entries.Set(k, v);
    } else if (source.IsArray() || source.IsLazy()) {  // Python takes any iterable of pairs
      for (const Value& pair : IterateItems(in, source)) {
        if (!pair.IsArray() || pair.list->size() != 2 || (*pair.list)[0].kind != Kind::kString)
          Unsupported("namespace() from pairs that are not [string, value] lists");
        entries.Set((*pair.list)[0].str(), (*pair.list)[1]);
      }
    } else {
      TemplateError(std::string("'") + source.TypeName() + "' object is not iterable");
    }
  }
  if (kwargs)
    for (const auto& [k, v] : kwargs->map->entries()) entries.Set(k, v);
  in.budget().Charge(static_cast<int64_t>(entries.size()) + 1);
  return in.heap().NewMap(Kind::kNamespace, std::move(entries));
}

}  // namespace

void CheckPythonPrintsTheSame(const Value& v, const char* where) {
  const std::string w = std::string(" (in ") + where + ")";
  switch (v.kind) {
    case Kind::kBoolean:
      Unsupported("a boolean written as text (Python writes True/False)" + w);
    case Kind::kArray:
    case Kind::kTuple:
    case Kind::kObject:
    case Kind::kKeywordArgs:
    case Kind::kNamespace:
    case Kind::kLoop:
      Unsupported("a list or mapping written as text (Python writes its repr)" + w);
    case Kind::kLazy:
      RefuseLazy(v, "writing as text" + w);
    case Kind::kFunction:
      Unsupported("a function written as text" + w);
    case Kind::kInteger:
      if (std::fabs(v.number) > kMaxExactInteger) Unsupported("an integer beyond 2^53" + w);
      return;
    case Kind::kFloat: {
      if (v.number == 0 && std::signbit(v.number))
        Unsupported("a negative zero written as text (Python writes -0.0)" + w);
      const double a = std::fabs(v.number);
      if (!std::isfinite(v.number) || (a != 0 && (a < 1e-4 || a >= 1e16)))
        Unsupported("a float Python would write in another notation" + w);
      return;
    }
    default:
      return;
  }
}

bool LooseEquals(const Value& a, const Value& b) {
  if (a.IsLazy() || b.IsLazy()) RefuseLazy(a.IsLazy() ? a : b, "==");
  const bool a_nullish = a.kind == Kind::kNull || a.kind == Kind::kUndefined;
  const bool b_nullish = b.kind == Kind::kNull || b.kind == Kind::kUndefined;
  if (a_nullish || b_nullish) {
    if (a_nullish && b_nullish && a.kind != b.kind)
      Unsupported("none compared with an undefined value (equal in the reference, not in Python)");
    return a.kind == b.kind;
  }
  if (a.kind == Kind::kString && b.kind == Kind::kString) return a.str() == b.str();
  const bool a_scalar = a.IsNumber() || a.kind == Kind::kBoolean;
  const bool b_scalar = b.IsNumber() || b.kind == Kind::kBoolean;
  if (a_scalar && b_scalar) {
    const double x = a.kind == Kind::kBoolean ? a.boolean : a.number;
    const double y = b.kind == Kind::kBoolean ? b.boolean : b.number;
    return x == y;
  }
  if ((a_scalar && b.kind == Kind::kString) || (b_scalar && a.kind == Kind::kString)) {
    const Value& s = a.kind == Kind::kString ? a : b;
    const Value& n = a.kind == Kind::kString ? b : a;
    bool unsupported = false;
    double parsed = JsStringToNumber(s.str(), &unsupported);
    const double x = n.kind == Kind::kBoolean ? n.boolean : n.number;
    if (unsupported || parsed == x)
      Unsupported(
          "a string compared with a number (converted in the reference, never equal in Python)");
    return false;
  }
  if (a.kind == Kind::kFunction || b.kind == Kind::kFunction) return a.function == b.function;
  const bool a_box = a.IsArray() || a.map, b_box = b.IsArray() || b.map;
  if (a_box && b_box && (a.list != b.list || a.map != b.map))
    Unsupported("== between two lists or mappings (identity in the reference, contents in Python)");
  if (a_box && b_box) return true;
  Unsupported("== between a list or mapping and a scalar");
}

bool StrictEquals(const Value& a, const Value& b) {
  if (a.IsLazy() || b.IsLazy()) RefuseLazy(a.IsLazy() ? a : b, "matching by value");
  if (a.IsNumber() && b.IsNumber()) return a.number == b.number;
  if ((a.kind == Kind::kBoolean && b.IsNumber()) || (b.kind == Kind::kBoolean && a.IsNumber()))
    Unsupported("a boolean matched against a number (unequal in the reference, equal in Python)");
  if (a.kind != b.kind) {
    if ((a.IsArray() && b.IsArray()) || (a.map && b.map))
      Unsupported("a list or mapping matched against another (identity in the reference)");
    return false;
  }
  switch (a.kind) {
    case Kind::kUndefined:
    case Kind::kNull:
      return true;
    case Kind::kBoolean:
      return a.boolean == b.boolean;
    case Kind::kString:
      return a.str() == b.str();
    case Kind::kFunction:
      return a.function == b.function;
    default:
      if (a.list != b.list || a.map != b.map)
        Unsupported("a list or mapping matched against another (identity in the reference)");
      return true;
  }
}

int CompareValues(const Value& a, const Value& b, bool case_sensitive) {
  for (Kind k : {Kind::kNull, Kind::kUndefined}) {
    if (a.kind == k && b.kind == k) return 0;
    if (a.kind == k || b.kind == k)
      TemplateError(std::string("cannot compare ") + a.TypeName() + " with " + b.TypeName());
  }
  const bool a_num = a.IsNumber() || a.kind == Kind::kBoolean;
  const bool b_num = b.IsNumber() || b.kind == Kind::kBoolean;
  if (a_num && b_num) {
    const double x = a.kind == Kind::kBoolean ? a.boolean : a.number;
    const double y = b.kind == Kind::kBoolean ? b.boolean : b.number;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.kind != b.kind)
    TemplateError(std::string("cannot compare different types: ") + a.TypeName() + " and " +
                  b.TypeName());
  if (a.kind != Kind::kString) TemplateError(std::string("cannot compare type: ") + a.TypeName());
  std::string x = a.str(), y = b.str();
  if (!case_sensitive) {
    x = AsciiLower(RequireAscii(x, "a case-insensitive sort"));
    y = AsciiLower(RequireAscii(y, "a case-insensitive sort"));
  }
  const int bytes = x < y ? -1 : x > y ? 1 : 0;  // code point order (Python's)
  std::u16string ux = ToUtf16(x), uy = ToUtf16(y);
  const int units = ux < uy ? -1 : ux > uy ? 1 : 0;  // UTF-16 order (the reference's)
  if (bytes != units) Unsupported("sorting strings whose UTF-16 and code point orders differ");
  return units;
}

// `lazy is name`: what Python answers for a generator, view or range where it is the same.
bool LazyTest(const std::string& name, const Value& v) {
  static const std::set<std::string> kFalse = {"undefined", "none",    "boolean", "true",
                                               "false",     "string",  "number",  "integer",
                                               "mapping",   "callable"};
  if (name == "defined" || name == "iterable") return true;
  if (kFalse.count(name)) return false;
  RefuseLazy(v, "the " + name + " test");
}

// `loop is name`: Python's LoopContext is iterable and callable and no mapping.
bool LoopTest(const std::string& name) {
  static const std::set<std::string> kFalse = {"undefined", "none",   "boolean", "true",
                                               "false",     "string", "number",  "integer"};
  if (name == "defined") return true;
  if (kFalse.count(name)) return false;
  Unsupported("the " + name + " test on a loop object (a LoopContext in Python)");
}

bool RunTest(const std::string& name, const Value& v, const Value& argument) {
  if (v.IsLazy()) return LazyTest(name, v);
  if (v.kind == Kind::kLoop) return LoopTest(name);
  // Jinja2's Undefined has __len__, __getitem__, __iter__ and __call__.
  if (v.kind == Kind::kUndefined &&
      (name == "sequence" || name == "iterable" || name == "callable"))
    Unsupported("the " + name + " test on an undefined value (true in Python)");
  if (name == "boolean") return v.kind == Kind::kBoolean;
  if (name == "callable") return v.kind == Kind::kFunction;
  if (name == "odd" || name == "even") {
    if (v.kind != Kind::kInteger) TemplateError("cannot " + name + " on " + v.TypeName());
    const bool odd = std::fmod(v.number, 2) != 0;
    return name == "odd" ? odd : !odd;
  }
  if (name == "false") return v.kind == Kind::kBoolean && !v.boolean;
  if (name == "true") return v.kind == Kind::kBoolean && v.boolean;
  if (name == "none") return v.kind == Kind::kNull;
  if (name == "string") return v.kind == Kind::kString;
  if (name == "number") {
    if (v.kind == Kind::kBoolean) Unsupported("the number test on a boolean (true in Python)");
    return v.IsNumber();
  }
  if (name == "integer") return v.kind == Kind::kInteger;
  if (name == "iterable") {
    if (v.kind == Kind::kTuple || v.map) Unsupported("the iterable test on a tuple or mapping");
    return v.kind == Kind::kArray || v.kind == Kind::kString;
  }
  if (name == "mapping") return v.IsObject();
  if (name == "sequence") return v.IsArray() || v.IsObject() || v.kind == Kind::kString;
  if (name == "lower" || name == "upper") return TestCase(v, name == "lower");
  if (name == "defined") return v.kind != Kind::kUndefined;
  if (name == "undefined") return v.kind == Kind::kUndefined;
  if (name == "equalto" || name == "eq") return StrictEquals(v, argument);
  TemplateError("unknown test: " + name);
}

void DefineGlobals(Interpreter& in, Environment* g, std::function<std::tm()> now) {
  for (const char* name : {"false", "False"}) g->Set(name, Value::Boolean(false));
  for (const char* name : {"true", "True"}) g->Set(name, Value::Boolean(true));
  for (const char* name : {"none", "None"}) g->Set(name, Value::Null());
  g->Set("raise_exception", in.heap().NewFunction([&in](std::vector<Value>& args) -> Value {
    std::string message;
    for (size_t i = 0; i < args.size(); ++i) {
      if (i) message += ",";
      message += args[i].kind == Kind::kString ? args[i].str() : PrintedText(args[i], in.budget());
    }
    TemplateError("raise_exception: " + message);
  }));
  g->Set("range", in.heap().NewFunction([&in](std::vector<Value>& args) {
    return Range(args, in.budget(), in.heap());
  }));
  g->Set("strftime_now", in.heap().NewFunction([now](std::vector<Value>& args) {
    if (args.empty() || args[0].kind != Kind::kString)
      TemplateError("strftime_now needs a format string");
    return Value::String(Strftime(args[0].str(), now()));
  }));
  g->Set("namespace",
         in.heap().NewFunction([&in](std::vector<Value>& args) { return Namespace(in, args); }));
}

}  // namespace evald::kernels::jinja
