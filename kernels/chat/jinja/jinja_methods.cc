#include "kernels/chat/jinja/jinja_methods.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "kernels/chat/jinja/jinja_builtins.h"
#include "kernels/chat/jinja/js_text.h"
#include "kernels/chat/jinja/lazy_sequence.h"

namespace evald::kernels::jinja {

namespace {

// Python's str.strip() white space (differs from JavaScript's: \x1c-\x1f and \x85 in, U+FEFF out).
bool IsPyWhiteSpace(uint32_t c) {
  return (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

bool IsWordChar(char c) {
  return IsAsciiLetter(c) || (c >= '0' && c <= '9') || c == '_';
}

// The reference's title against Python's str.title() (the method).
std::string Title(const std::string& s) {
  std::string js = JsTitle(s), py = s;
  for (size_t i = 0; i < s.size(); ++i) {
    bool after_letter = i > 0 && IsAsciiLetter(s[i - 1]);
    if (IsAsciiLetter(s[i]))
      py[i] = after_letter ? AsciiLower(s.substr(i, 1))[0] : AsciiUpper(s.substr(i, 1))[0];
  }
  if (js != py) Unsupported("title on '" + s.substr(0, 40) + "' (Python and the reference differ)");
  return js;
}

std::string Capitalize(const std::string& s) {
  RequireAscii(s, "capitalize");
  std::string js = s.empty() ? s : AsciiUpper(s.substr(0, 1)) + s.substr(1);
  std::string py = s.empty() ? s : AsciiUpper(s.substr(0, 1)) + AsciiLower(s.substr(1));
  if (js != py) Unsupported("capitalize on mixed case (Python lowers the rest)");
  return js;
}

// The reference's strip ignores its argument (JavaScript's trim); Python's strips the given
// characters. The result stands only where both agree.
std::string Strip(const std::string& s, const std::vector<Value>& args, bool left, bool right) {
  std::string_view js = left && right ? JsTrim(s) : left ? JsTrimStart(s) : JsTrimEnd(s);
  const std::string* chars = nullptr;
  if (!args.empty() && args[0].kind == Kind::kString)
    chars = &args[0].str();
  else if (!args.empty() && args[0].kind != Kind::kNull)
    Unsupported("strip with a non-string argument");
  if (PyStrip(s, chars, left, right) != js)
    Unsupported(
        "strip/lstrip/rstrip whose result differs between Python and the reference "
        "(the reference strips white space whatever the argument)");
  return std::string(js);
}

std::string ReplaceAll(const std::string& s, const std::string& from, const std::string& to,
                       double count, WorkBudget& budget) {
  if (count == 0) return s;
  double remaining = count < 0 ? INFINITY : count;
  std::string out;
  if (from.empty()) {  // between code points, as a "(?=)" pattern with the u flag
    std::vector<std::string_view> cps = CodePoints(s);
    for (size_t i = 0; i <= cps.size(); ++i) {
      budget.Charge(static_cast<int64_t>(to.size()) + 1);
      if (remaining > 0) out += to, --remaining;
      if (i < cps.size()) out += cps[i];
    }
    return out;
  }
  size_t pos = 0;
  while (true) {
    size_t hit = remaining > 0 ? s.find(from, pos) : std::string::npos;
    if (hit == std::string::npos) break;
    budget.Charge(static_cast<int64_t>(to.size() + hit - pos) + 1);
    out += s.substr(pos, hit - pos) + to;
    pos = hit + from.size();
    --remaining;
  }
  return out + s.substr(pos);
}

Value Split(Interpreter& in, const std::string& s, const std::vector<Value>& args) {
  Value sep = args.size() > 0 ? args[0] : Value::Null();
  if (sep.kind != Kind::kString && sep.kind != Kind::kNull)
    TemplateError("sep argument must be a string or null");
  Value maxsplit = args.size() > 1 ? args[1] : Value::Integer(-1);
  if (maxsplit.kind != Kind::kInteger) TemplateError("maxsplit argument must be a number");
  const double limit = maxsplit.number;
  ValueList parts;
  if (sep.kind == Kind::kNull) {
    std::string_view text = JsTrimStart(s);
    size_t p = 0;
    while (p < text.size()) {
      size_t start = p;
      while (p < text.size()) {  // a run of non-space characters
        size_t next = p;
        if (IsJsWhiteSpace(DecodeCodePoint(text, &next))) break;
        p = next;
      }
      if (p > start) {
        if (limit >= 0 && static_cast<double>(parts.size()) >= limit) {
          parts.push_back(Value::String(std::string(text.substr(start))));
          break;
        }
        parts.push_back(Value::String(std::string(text.substr(start, p - start))));
      }
      while (p < text.size()) {
        size_t next = p;
        if (!IsJsWhiteSpace(DecodeCodePoint(text, &next))) break;
        p = next;
      }
    }
  } else {
    const std::string& d = sep.str();
    if (d.empty()) TemplateError("empty separator");
    size_t pos = 0;
    while (true) {
      in.budget().Charge(1);
      if (limit >= 0 && static_cast<double>(parts.size()) >= limit) break;
      size_t hit = s.find(d, pos);
      if (hit == std::string::npos) break;
      parts.push_back(Value::String(s.substr(pos, hit - pos)));
      pos = hit + d.size();
    }
    parts.push_back(Value::String(s.substr(pos)));
  }
  in.budget().Charge(static_cast<int64_t>(parts.size() + s.size()));
  return in.heap().NewList(Kind::kArray, std::move(parts));
}

Value PrefixTest(const std::string& s, const std::vector<Value>& args, bool start,
                 const char* name) {
  if (args.empty()) TemplateError(std::string(name) + "() requires at least one argument");
  auto matches = [&](const std::string& p) { return start ? s.starts_with(p) : s.ends_with(p); };
  if (args[0].kind == Kind::kString) return Value::Boolean(matches(args[0].str()));
  if (!args[0].IsArray())
    TemplateError(std::string(name) + "() argument must be a string or tuple");
  for (const Value& item : *args[0].list) {
    if (item.kind != Kind::kString)
      TemplateError(std::string(name) + "() tuple elements must be strings");
    if (matches(item.str())) return Value::Boolean(true);
  }
  return Value::Boolean(false);
}

Value ObjectMethod(Interpreter& in, const Value& self, const std::string& name,
                   std::vector<Value>& args) {
  const ValueMap& map = *self.map;
  if (name == "get") {
    if (args.empty() || args[0].kind != Kind::kString) TemplateError("object key must be a string");
    if (const Value* v = map.Find(args[0].str())) return *v;
    return args.size() > 1 ? args[1] : Value::Null();
  }
  if (name == "items") return AsLazy(PairList(in, map), false);  // Python's dict views
  ValueList out;
  if (name == "keys")
    for (const auto& e : map.entries()) out.push_back(Value::String(e.first));
  if (name == "values")
    for (const auto& e : map.entries()) out.push_back(e.second);
  in.budget().Charge(static_cast<int64_t>(out.size()));
  return AsLazy(in.heap().NewList(Kind::kArray, std::move(out)), false);
}

// A Markup's methods HTML-escape their string arguments first.
void CheckMarkupArgument(const Value& a) {
  if (a.kind == Kind::kString && !a.py_markup && HasHtmlSpecial(a.str()))
    Unsupported("a method of a |safe string with an argument Python HTML-escapes");
  if (a.kind == Kind::kKeywordArgs)
    for (const auto& entry : a.map->entries()) CheckMarkupArgument(entry.second);
}

}  // namespace

bool HasHtmlSpecial(const std::string& s) {
  return s.find_first_of("&<>\"'") != std::string::npos;
}

void KeepMarkup(Value* v) {
  if (v->kind == Kind::kString) v->py_markup = true;
  if (v->kind == Kind::kArray)
    for (Value& item : *v->list) KeepMarkup(&item);
}

std::string JsTitle(const std::string& s) {
  RequireAscii(s, "title");
  std::string js = s;
  for (size_t i = 0; i < s.size(); ++i)
    if (IsWordChar(s[i]) && (i == 0 || !IsWordChar(s[i - 1])))
      js[i] = AsciiUpper(s.substr(i, 1))[0];
  return js;
}

Value DictSort(Interpreter& in, const ValueMap& map, std::vector<Value> args) {
  ValueMap kwargs;
  std::vector<Value> positional;
  for (const Value& a : args) {
    if (a.kind == Kind::kKeywordArgs)
      kwargs = *a.map;
    else
      positional.push_back(a);
  }
  Value case_sensitive = ArgOr(positional, kwargs, 0, "case_sensitive", Value::Boolean(false));
  if (case_sensitive.kind != Kind::kBoolean) TemplateError("case_sensitive must be a boolean");
  Value by = ArgOr(positional, kwargs, 1, "by", Value::String("key"));
  if (by.kind != Kind::kString) TemplateError("by must be a string");
  if (by.str() != "key" && by.str() != "value") TemplateError("by must be either 'key' or 'value'");
  Value reverse = ArgOr(positional, kwargs, 2, "reverse", Value::Boolean(false));
  if (reverse.kind != Kind::kBoolean) TemplateError("reverse must be a boolean");
  Value pairs = PairList(in, map);
  const size_t index = by.str() == "key" ? 0 : 1;
  std::stable_sort(pairs.list->begin(), pairs.list->end(), [&](const Value& a, const Value& b) {
    int r = CompareValues((*a.list)[index], (*b.list)[index], case_sensitive.boolean);
    return reverse.boolean ? r > 0 : r < 0;
  });
  return pairs;
}

// Python's str.strip/lstrip/rstrip, by white space or by a set of characters.
std::string PyStrip(std::string_view s, const std::string* chars, bool left, bool right) {
  std::vector<std::string_view> cps = CodePoints(s);
  std::set<std::string_view> strip_set;
  if (chars) {
    for (auto c : CodePoints(*chars)) strip_set.insert(c);
  }
  auto strips = [&](std::string_view cp) {
    if (chars) return strip_set.count(cp) > 0;
    size_t p = 0;
    return IsPyWhiteSpace(DecodeCodePoint(cp, &p));
  };
  size_t b = 0, e = cps.size();
  while (left && b < e && strips(cps[b])) ++b;
  while (right && e > b && strips(cps[e - 1])) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) out += cps[i];
  return out;
}

std::string AsciiUpper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
  return s;
}

std::string AsciiLower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return s;
}

bool IsAsciiLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

const std::string& RequireAscii(const std::string& s, const char* what) {
  if (!IsAscii(s)) Unsupported(std::string(what) + " of non-ASCII text");
  return s;
}

Value StringMethod(Interpreter& in, const Value& self, const std::string& name,
                   std::vector<Value>& args) {
  const std::string& s = self.str();
  in.budget().Charge(static_cast<int64_t>(s.size()) + 1);
  if (name == "upper") return Value::String(AsciiUpper(RequireAscii(s, "upper")));
  if (name == "lower") return Value::String(AsciiLower(RequireAscii(s, "lower")));
  if (name == "strip") return Value::String(Strip(s, args, true, true));
  if (name == "lstrip") return Value::String(Strip(s, args, true, false));
  if (name == "rstrip") return Value::String(Strip(s, args, false, true));
  if (name == "title") return Value::String(Title(s));
  if (name == "capitalize") return Value::String(Capitalize(s));
  if (name == "startswith") return PrefixTest(s, args, true, "startswith");
  if (name == "endswith") return PrefixTest(s, args, false, "endswith");
  if (name == "split") return Split(in, s, args);
  // replace
  if (args.size() < 2) TemplateError("replace() requires at least two arguments");
  if (args[0].kind != Kind::kString || args[1].kind != Kind::kString)
    TemplateError("replace() arguments must be strings");
  Value count = Value::Null();
  if (args.size() > 2) {
    if (args[2].kind == Kind::kKeywordArgs) {
      const Value* c = args[2].map->Find("count");
      count = c ? *c : Value::Null();
    } else {
      count = args[2];
    }
  }
  if (count.kind != Kind::kInteger && count.kind != Kind::kNull)
    TemplateError("replace() count argument must be a number or null");
  return Value::String(ReplaceAll(s, args[0].str(), args[1].str(),
                                  count.kind == Kind::kNull ? -1 : count.number, in.budget()));
}

// A filter's or method's argument `i`, else its keyword `key`, else `fallback`.
Value ArgOr(const std::vector<Value>& args, const ValueMap& kwargs, size_t i, const char* key,
            Value fallback) {
  if (i < args.size()) return args[i];
  const Value* v = kwargs.Find(key);
  return v ? *v : fallback;
}

Value PairList(Interpreter& in, const ValueMap& map) {
  ValueList pairs;
  for (const auto& [k, v] : map.entries()) {
    pairs.push_back(in.heap().NewList(Kind::kArray, {Value::String(k), v}));
    pairs.back().py_tuple = true;
  }
  in.budget().Charge(static_cast<int64_t>(pairs.size()) * 2);
  return in.heap().NewList(Kind::kArray, std::move(pairs));
}

Value BuiltinMember(Interpreter& in, const Value& object, const std::string& name) {
  static const std::set<std::string> kStringMethods = {
      "upper",  "lower",      "strip",    "title", "capitalize", "rstrip",
      "lstrip", "startswith", "endswith", "split", "replace"};
  static const std::set<std::string> kObjectMethods = {"get", "items", "keys", "values"};
  if (name == "length" && (object.kind == Kind::kString || object.IsArray()))
    Unsupported(".length (Python's strings and lists have no such attribute)");
  if (object.kind == Kind::kString && kStringMethods.count(name)) {
    return in.heap().NewFunction([&in, object, name](std::vector<Value>& args) {
      if (object.py_markup)
        for (const Value& a : args) CheckMarkupArgument(a);
      Value result = StringMethod(in, object, name, args);
      if (object.py_markup) KeepMarkup(&result);
      return result;
    });
  }
  // The reference binds a dictsort method, Python's dicts have none (undefined there).
  if (object.IsObject() && name == "dictsort")
    Unsupported("a dictsort method (Python's dicts have none)");
  if (object.IsObject() && kObjectMethods.count(name)) {
    return in.heap().NewFunction([&in, object, name](std::vector<Value>& args) {
      return ObjectMethod(in, object, name, args);
    });
  }
  return Value::Undefined();
}

}  // namespace evald::kernels::jinja
