#include "kernels/chat/jinja/jinja_format.h"

#include <cmath>

#include "kernels/chat/jinja/js_text.h"

namespace evald::kernels::jinja {

namespace {

// Self-referencing namespaces recurse without end in the reference (a stack overflow there);
// values nested this deep are refused here.
constexpr int kMaxNesting = 200;

std::string Json(const Value& v, const JsonOptions& o, int depth, WorkBudget& budget) {
  budget.Charge(1);
  if (depth > kMaxNesting) Unsupported("values nested more than 200 levels deep");
  switch (v.kind) {
    case Kind::kNull:
      return "null";
    case Kind::kUndefined:
      return o.undefined_as_null ? "null" : "undefined";
    case Kind::kInteger:
    case Kind::kFloat:
      return std::isfinite(v.number) ? JsNumberToString(v.number) : "null";
    case Kind::kBoolean:
      return v.boolean ? "true" : "false";
    case Kind::kString: {
      budget.Charge(static_cast<int64_t>(v.str().size()));
      std::string quoted = JsonQuote(v.str());
      return o.ensure_ascii ? JsonAsciiSafe(quoted) : quoted;
    }
    case Kind::kArray:
    case Kind::kObject:
    case Kind::kNamespace:
      break;
    default:
      TemplateError(std::string("cannot convert to JSON: ") + v.TypeName());
  }
  const std::string item_sep = o.separators ? o.separators->first : o.indent ? "," : ", ";
  const std::string key_sep = o.separators ? o.separators->second : ": ";
  const std::string unit(static_cast<size_t>(o.indent), ' ');
  std::string base = "\n";
  for (int i = 0; i < depth; ++i) base += unit;
  const std::string children = base + unit;
  budget.Charge(static_cast<int64_t>(children.size()));
  std::string out;
  if (v.kind == Kind::kArray) {
    std::string joined;
    for (size_t i = 0; i < v.list->size(); ++i) {
      if (i) joined += o.indent ? item_sep + children : item_sep;
      joined += Json((*v.list)[i], o, depth + 1, budget);
    }
    if (o.indent && !v.list->empty()) return "[" + children + joined + base + "]";
    return "[" + joined + "]";
  }
  std::string joined;
  bool first = true;
  for (const auto& [key, value] : v.map->entries()) {
    if (!first) joined += item_sep;
    first = false;
    std::string key_json = JsonQuote(key);
    if (o.ensure_ascii) key_json = JsonAsciiSafe(key_json);
    if (o.indent) joined += children;
    joined += key_json + key_sep + Json(value, o, depth + 1, budget);
  }
  if (o.indent && v.map->size() > 0) return "{" + joined + base + "}";
  return "{" + joined + "}";
}

}  // namespace

std::string ToJson(const Value& value, const JsonOptions& options, WorkBudget& budget) {
  if (options.indent < 0) TemplateError("tojson indent must not be negative");
  return Json(value, options, 0, budget);
}

std::string PrintedText(const Value& v, WorkBudget& budget) {
  switch (v.kind) {
    case Kind::kUndefined:
      return "undefined";
    case Kind::kNull:
      return "null";
    case Kind::kBoolean:
      return v.boolean ? "true" : "false";
    case Kind::kInteger:
      return JsNumberToString(v.number);
    case Kind::kFloat:
      return JsFloatToString(v.number);
    case Kind::kString:
      return v.str();
    case Kind::kFunction:
      Unsupported("a function printed as text");
    default: {
      JsonOptions o;
      o.undefined_as_null = false;
      return ToJson(v, o, budget);
    }
  }
}

std::string JsString(const Value& v, WorkBudget& budget) {
  switch (v.kind) {
    case Kind::kFloat:
    case Kind::kInteger:
      return JsNumberToString(v.number);
    case Kind::kArray:
    case Kind::kTuple: {
      // Array.prototype.toString: the elements' own toString, joined by commas.
      std::string out;
      for (size_t i = 0; i < v.list->size(); ++i) {
        budget.Charge(1);
        if (i) out += ',';
        out += PrintedText((*v.list)[i], budget);
      }
      return out;
    }
    case Kind::kObject:
    case Kind::kKeywordArgs:
    case Kind::kNamespace:
      Unsupported("a mapping converted to a string ([object Map])");
    default:
      return PrintedText(v, budget);
  }
}

}  // namespace evald::kernels::jinja
