// The methods of strings (`.split()`, `.strip()`, `.replace()`, ...) and mappings (`.items()`,
// `.get()`) and the dictsort filter, as @huggingface/jinja binds them, with the text rules the
// filters share: Python's strip, ASCII case mapping, an argument by position or keyword.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernels/chat/jinja/jinja_interpreter.h"
#include "kernels/chat/jinja/jinja_value.h"

namespace evald::kernels::jinja {

// `object.name` when the object has no such entry: a bound method, or undefined (`.length`,
// which Python's strings and lists lack, is refused).
Value BuiltinMember(Interpreter& in, const Value& object, const std::string& name);

// `self.name(args)` for a string method name BuiltinMember binds.
Value StringMethod(Interpreter& in, const Value& self, const std::string& name,
                   std::vector<Value>& args);

// [key, value] lists of a mapping, in order (`items`).
Value PairList(Interpreter& in, const ValueMap& map);

// The dictsort filter: the pairs sorted by key or value (`args` as the filter's call gives them).
Value DictSort(Interpreter& in, const ValueMap& map, std::vector<Value> args);

// A filter's or method's argument `i`, else its keyword `key`, else `fallback`.
Value ArgOr(const std::vector<Value>& args, const ValueMap& kwargs, size_t i, const char* key,
            Value fallback);

// Python's str.strip/lstrip/rstrip, by white space (`chars` null) or by a set of characters.
std::string PyStrip(std::string_view s, const std::string* chars, bool left, bool right);

// Whether HTML escaping would change `s` (& < > " '): where a Python Markup and a plain string
// part ways.
bool HasHtmlSpecial(const std::string& s);
// Marks a string (or each string of a list: Markup.split) as a Python Markup.
void KeepMarkup(Value* v);

// The reference's title (filter and method alike): JavaScript's /\b\w/g upper-cased; ASCII only.
std::string JsTitle(const std::string& s);

std::string AsciiUpper(std::string s);
std::string AsciiLower(std::string s);
bool IsAsciiLetter(char c);
// `s` itself; Unsupported naming `what` when it is not ASCII (case mapping beyond ASCII is the
// JavaScript engine's Unicode tables, which evald does not carry).
const std::string& RequireAscii(const std::string& s, const char* what);

}  // namespace evald::kernels::jinja
