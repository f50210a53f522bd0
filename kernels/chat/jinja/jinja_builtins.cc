#include "kernels/chat/jinja/jinja_builtins.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "kernels/chat/jinja/jinja_format.h"
#include "kernels/chat/jinja/js_text.h"

namespace evald::kernels::jinja {

namespace {

constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

// A numeric argument as a count within [lo, hi] (NaN as lo).
size_t BoundedCount(double v, double lo, double hi) {
  return static_cast<size_t>(std::isnan(v) ? lo : std::clamp(v, lo, hi));
}

// Python's str.strip() white space (differs from JavaScript's: \x1c-\x1f and \x85 in, U+FEFF out).
bool IsPyWhiteSpace(uint32_t c) {
  return (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
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
bool IsWordChar(char c) {
  return IsAsciiLetter(c) || (c >= '0' && c <= '9') || c == '_';
}

const std::string& RequireAscii(const std::string& s, const char* what) {
  if (!IsAscii(s)) Unsupported(std::string(what) + " of non-ASCII text");
  return s;
}

// JavaScript's /\b\w/g upper-cased (the reference's title) against Python's str.title().
std::string Title(const std::string& s) {
  RequireAscii(s, "title");
  std::string js = s, py = s;
  for (size_t i = 0; i < s.size(); ++i) {
    if (IsWordChar(s[i]) && (i == 0 || !IsWordChar(s[i - 1])))
      js[i] = AsciiUpper(s.substr(i, 1))[0];
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
  for (const auto& [k, v] : map.entries())
    pairs.push_back(in.heap().NewList(Kind::kArray, {Value::String(k), v}));
  in.budget().Charge(static_cast<int64_t>(pairs.size()) * 2);
  return in.heap().NewList(Kind::kArray, std::move(pairs));
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

Value ObjectMethod(Interpreter& in, const Value& self, const std::string& name,
                   std::vector<Value>& args) {
  const ValueMap& map = *self.map;
  if (name == "get") {
    if (args.empty() || args[0].kind != Kind::kString) TemplateError("object key must be a string");
    if (const Value* v = map.Find(args[0].str())) return *v;
    return args.size() > 1 ? args[1] : Value::Null();
  }
  if (name == "items") return PairList(in, map);
  ValueList out;
  if (name == "keys")
    for (const auto& e : map.entries()) out.push_back(Value::String(e.first));
  if (name == "values")
    for (const auto& e : map.entries()) out.push_back(e.second);
  if (name == "dictsort") return DictSort(in, map, args);
  in.budget().Charge(static_cast<int64_t>(out.size()));
  return in.heap().NewList(Kind::kArray, std::move(out));
}

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
  if (v.kind != Kind::kString) return false;
  const std::string& s = RequireAscii(v.str(), lower ? "the lower test" : "the upper test");
  bool js = s == (lower ? AsciiLower(s) : AsciiUpper(s));
  if (js != PyIsCase(s, lower)) Unsupported("the lower/upper test on text without letters");
  return js;
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

std::string Join(const Value& operand, const std::string& separator, WorkBudget& budget) {
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
  for (size_t i = 0; i < operand.list->size(); ++i) {
    if (i) out += separator;
    out += JoinPart((*operand.list)[i]);
    budget.Charge(static_cast<int64_t>(separator.size()) + 1);
  }
  return out;
}

void CheckJsonAgrees(const Value& v, int depth) {
  if (depth > 200) Unsupported("values nested more than 200 levels deep");
  if (v.kind == Kind::kUndefined) Unsupported("tojson of an undefined value (Python raises)");
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

Value Indent(const std::string& s, const std::string& indent, bool first, bool blank,
             WorkBudget& budget) {
  for (char c : s)
    if (c == '\r' || c == '\v' || c == '\f' || (c >= 0x1C && c <= 0x1E))
      Unsupported("indent of text with line breaks other than \\n");
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
  for (const Value& item : *list.list)
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
  for (const Value& item : *list.list) {
    in.budget().Charge(1);
    const Value* a = item.map->Find(args[0].str());
    bool result = false;
    if (a)
      result = test.empty() ? a->Truthy()
                            : RunTest(test, *a, args.size() > 2 ? args[2] : Value::Undefined());
    if (result == select) out.push_back(item);
  }
  return in.heap().NewList(Kind::kArray, std::move(out));
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
  ValueList sorted = *list.list;
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
  for (const Value& item : *list.list) {
    if (!item.IsAttributeContainer()) TemplateError("items in map must be an object");
    Value v = AttributeOf(item, attr->str());
    out.push_back(v.kind == Kind::kUndefined && fallback ? *fallback : v);
  }
  in.budget().Charge(static_cast<int64_t>(out.size()));
  return in.heap().NewList(Kind::kArray, std::move(out));
}

Value Unique(Interpreter& in, const Value& list) {
  ValueList out;
  std::set<std::string> seen, seen_lower;
  for (const Value& item : *list.list) {
    if (item.kind != Kind::kString) Unsupported("unique over values other than strings");
    if (seen.insert(item.str()).second) {
      if (!seen_lower.insert(AsciiLower(RequireAscii(item.str(), "unique"))).second)
        Unsupported("unique over strings that differ only in case (Python ignores case)");
      out.push_back(item);
    }
  }
  return in.heap().NewList(Kind::kArray, std::move(out));
}

Value ArrayFilter(Interpreter& in, const Value& operand, const std::string& name) {
  const ValueList& list = *operand.list;
  if (name == "list") return operand;
  if (name == "first" || name == "last") {
    if (list.empty()) Unsupported(name + " of an empty list");
    return name == "first" ? list.front() : list.back();
  }
  if (name == "length") return Value::Integer(static_cast<double>(list.size()));
  if (name == "reverse")
    return in.heap().NewList(Kind::kArray, ValueList(list.rbegin(), list.rend()));
  if (name == "sort") return SortList(in, operand, nullptr, nullptr);
  if (name == "join") return Value::String(Join(operand, "", in.budget()));
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
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize")
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
  if (name == "bool") return operand;
  if (name == "int") return Value::Integer(operand.boolean ? 1 : 0);
  if (name == "float") return Value::Float(operand.boolean ? 1 : 0);
  if (name == "string") Unsupported("the string filter on a boolean (Python writes True/False)");
  TemplateError("unknown BooleanValue filter: " + name);
}

Value NamedFilter(Interpreter& in, const Value& operand, const std::string& name) {
  if (name == "safe") return operand;
  if (name == "tojson") return ToJsonFilter(in, operand, nullptr, nullptr);
  if (operand.IsArray()) return ArrayFilter(in, operand, name);
  if (operand.kind == Kind::kString) return StringFilter(in, operand, name);
  if (operand.IsNumber() || operand.kind == Kind::kBoolean) return ScalarFilter(operand, name);
  if (operand.IsObject()) {
    if (name == "items") return PairList(in, *operand.map);
    if (name == "length") return Value::Integer(static_cast<double>(operand.map->size()));
    Value builtin = BuiltinMember(in, operand, name);
    if (builtin.kind == Kind::kFunction) {
      std::vector<Value> none;
      return (*builtin.function)(none);
    }
    if (builtin.kind != Kind::kUndefined) return builtin;
    TemplateError("unknown ObjectValue filter: " + name);
  }
  TemplateError("cannot apply filter \"" + name + "\" to type: " + operand.TypeName());
}

Value CalledFilter(Interpreter& in, const Value& operand, const Node& call, Environment* env) {
  if (call.a->kind != NodeKind::kIdentifier) TemplateError("unknown filter");
  const std::string& name = call.a->text;
  if (name == "tojson") return ToJsonFilter(in, operand, &call, env);
  if (name == "join") {
    if (!operand.IsArray() && operand.kind != Kind::kString)
      TemplateError("cannot apply filter \"join\" to type: " + std::string(operand.TypeName()));
    auto [args, kwargs] = in.SplitArguments(call.items, env);
    if (kwargs.size() > 0) Unsupported("join with keyword arguments");
    Value sep = args.empty() ? Value::String("") : args[0];
    if (sep.kind != Kind::kString) TemplateError("separator must be a string");
    return Value::String(Join(operand, sep.str(), in.budget()));
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
  if (operand.IsArray()) {
    if (name == "sort") return SortList(in, operand, &call, env);
    if (name == "selectattr" || name == "rejectattr")
      return SelectAttr(in, operand, call, env, name == "selectattr");
    if (name == "map") return MapAttribute(in, operand, call, env);
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
      return Indent(operand.str(), unit,
                    ArgOr(args, kwargs, 1, "first", Value::Boolean(false)).Truthy(),
                    ArgOr(args, kwargs, 2, "blank", Value::Boolean(false)).Truthy(), in.budget());
    }
    if (name == "replace") {
      std::vector<Value> args = in.CallArguments(call.items, env);
      return StringMethod(in, operand, "replace", args);
    }
    TemplateError("unknown StringValue filter: " + name);
  }
  if (operand.IsObject()) {
    Value builtin = BuiltinMember(in, operand, name);
    if (builtin.kind == Kind::kFunction) {
      std::vector<Value> args = in.CallArguments(call.items, env);
      return (*builtin.function)(args);
    }
    TemplateError("unknown ObjectValue filter: " + name);
  }
  TemplateError("cannot apply filter \"" + name + "\" to type: " + operand.TypeName());
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
  return heap.NewList(Kind::kArray, std::move(out));
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
    } else if (source.IsArray()) {
      for (const Value& pair : *source.list) {
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
      Unsupported("a list or mapping written as text (Python writes its repr)" + w);
    case Kind::kFunction:
      Unsupported("a function written as text" + w);
    case Kind::kInteger:
      if (std::fabs(v.number) > kMaxExactInteger) Unsupported("an integer beyond 2^53" + w);
      return;
    case Kind::kFloat: {
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

bool RunTest(const std::string& name, const Value& v, const Value& argument) {
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

Value BuiltinMember(Interpreter& in, const Value& object, const std::string& name) {
  static const std::set<std::string> kStringMethods = {
      "upper",  "lower",      "strip",    "title", "capitalize", "rstrip",
      "lstrip", "startswith", "endswith", "split", "replace"};
  static const std::set<std::string> kObjectMethods = {"get", "items", "keys", "values",
                                                       "dictsort"};
  if (name == "length" && (object.kind == Kind::kString || object.IsArray()))
    Unsupported(".length (Python's strings and lists have no such attribute)");
  if (object.kind == Kind::kString && kStringMethods.count(name)) {
    return in.heap().NewFunction([&in, object, name](std::vector<Value>& args) {
      return StringMethod(in, object, name, args);
    });
  }
  if (object.IsObject() && kObjectMethods.count(name)) {
    return in.heap().NewFunction([&in, object, name](std::vector<Value>& args) {
      return ObjectMethod(in, object, name, args);
    });
  }
  return Value::Undefined();
}

Value ApplyFilter(Interpreter& in, const Value& operand, const Node& filter, Environment* env) {
  in.budget().Charge(1);
  if (filter.kind == NodeKind::kIdentifier) return NamedFilter(in, operand, filter.text);
  if (filter.kind == NodeKind::kCall) return CalledFilter(in, operand, filter, env);
  TemplateError("unknown filter");
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
