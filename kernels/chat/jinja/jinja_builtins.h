// The rules a chat template's names share with the interpreter: tests (`is string`), the
// globals (range, namespace, raise_exception, strftime_now), equality and ordering, and what
// Python prints differently - each as @huggingface/jinja defines it. Filters are in
// jinja_filters.h, the methods of strings and mappings in jinja_methods.h. Where Python's Jinja2
// would give different bytes (a boolean printed, `title` on mixed case, `strip('x')`, a float
// concatenated), a construct is refused by name (Unsupported) instead of guessing which one the
// model was tuned on.
#pragma once

#include <ctime>
#include <functional>
#include <string>

#include "kernels/chat/jinja/jinja_interpreter.h"
#include "kernels/chat/jinja/jinja_value.h"

namespace evald::kernels::jinja {

// `operand is name`; TemplateError for an unknown test.
bool RunTest(const std::string& name, const Value& operand, const Value& argument);

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
