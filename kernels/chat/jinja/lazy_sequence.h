// Sequences Python's Jinja2 holds lazily where @huggingface/jinja holds an array (Kind::kLazy):
// the generators select, selectattr, rejectattr, map, unique, reverse and the items filter
// return, the dict views of .items(), .keys() and .values(), and range(). Python cannot index
// them, print them, serialise them, add or compare them as lists, nor take a generator's length
// or truth (always true), and a generator's second iteration finds nothing. So a lazy sequence
// is allowed only where both engines do the same with it - iterating it once, the filters that
// iterate it (list, join, first, sort, the select family, map, unique, reverse), membership and
// length of a view or range, the tests that do not look inside - and refused by name anywhere
// else.
#pragma once

#include <string>

#include "kernels/chat/jinja/jinja_interpreter.h"
#include "kernels/chat/jinja/jinja_value.h"

namespace evald::kernels::jinja {

// `list` (an array the heap holds) as a lazy sequence: a generator when `one_shot`, else a view
// or a range.
Value AsLazy(Value list, bool one_shot);

// The items of an array or a lazy sequence, for an operation that iterates it once from the
// start as Python does. A generator iterated a second time is refused.
const ValueList& IterateItems(Interpreter& in, const Value& sequence);

// `sequence | name` (a filter without arguments) on a lazy sequence.
Value LazyFilter(Interpreter& in, const Value& sequence, const std::string& name);

// `left op right` where either side is lazy: membership in a view or range; else refused.
Value LazyOperation(const std::string& op, const Value& left, const Value& right);

// Refuses `what` (an operation Python does not do with it as with a list) on a lazy sequence.
[[noreturn]] void RefuseLazy(const Value& sequence, const std::string& what);

}  // namespace evald::kernels::jinja
