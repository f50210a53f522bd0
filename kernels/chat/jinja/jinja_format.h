// Values as text, by the reference engine's three different rules: what {{ value }} prints
// (its RuntimeValue.toString), what `~`, `+` and `join` see (the raw JavaScript value's
// String()), and the `tojson` filter (its own JSON writer over JSON.stringify).
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "kernels/chat/jinja/jinja_value.h"
#include "kernels/chat/jinja/render_error.h"

namespace evald::kernels::jinja {

// {{ value }}: numbers as the reference prints them (1.0 stays "1.0"), lists and mappings as
// JSON, true/false in lower case. Not called for null and undefined (they print nothing).
std::string PrintedText(const Value& value, WorkBudget& budget);

// String(value.value) in JavaScript: what string concatenation writes (1.0 becomes "1").
std::string JsString(const Value& value, WorkBudget& budget);

struct JsonOptions {
  int indent = 0;  // 0: one line
  bool ensure_ascii = false;
  std::optional<std::pair<std::string, std::string>> separators;  // item, key
  bool undefined_as_null = true;  // tojson: null; printing a list: the word undefined
};
std::string ToJson(const Value& value, const JsonOptions& options, WorkBudget& budget);

}  // namespace evald::kernels::jinja
