// What a chat template calls by name: filters (`| trim`), tests (`is string`), the methods of
// strings and mappings (`.split()`, `.items()`), the globals (range, namespace,
// raise_exception, strftime_now), and the equality and ordering rules they share - each as
// @huggingface/jinja defines it. Where Python's Jinja2 would give different bytes (a boolean
// printed, `title` on mixed case, `strip('x')`, a float concatenated), the call is refused by
// name (Unsupported) instead of guessing which one the model was tuned on.
#pragma once

#include <ctime>
#include <functional>
#include <string>

#include "kernels/chat/jinja/jinja_ast.h"
#include "kernels/chat/jinja/jinja_interpreter.h"
#include "kernels/chat/jinja/jinja_value.h"

namespace evald::kernels::jinja {

// `operand | filter` where `filter` is an identifier or a call node.
Value ApplyFilter(Interpreter& in, const Value& operand, const Node& filter, Environment* env);

// `operand is name`; TemplateError for an unknown test.
bool RunTest(const std::string& name, const Value& operand, const Value& argument);

// `object.name` when the object has no such entry: a bound method or a property (`length`),
// or undefined.
Value BuiltinMember(Interpreter& in, const Value& object, const std::string& name);

// The globals every render starts with; `now` gives strftime_now its time.
void DefineGlobals(Interpreter& in, Environment* globals, std::function<std::tm()> now);

// JavaScript's == (the template's ==), refusing the cases Python answers differently.
bool LooseEquals(const Value& a, const Value& b);
// JavaScript's === (`in` over a list, the equalto test), likewise.
bool StrictEquals(const Value& a, const Value& b);
// sort/dictsort's ordering: numbers with numbers, strings with strings (optionally by lower
// case), null and undefined only with their own kind.
int CompareValues(const Value& a, const Value& b, bool case_sensitive);

// Refuses a value whose text Python would print differently ({{ value }}, `~`, `string`):
// booleans, lists and mappings, integers past 2^53, floats in exponent notation for one of them.
void CheckPythonPrintsTheSame(const Value& value, const char* where);

}  // namespace evald::kernels::jinja
