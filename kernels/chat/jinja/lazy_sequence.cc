#include "kernels/chat/jinja/lazy_sequence.h"

#include <algorithm>

#include "kernels/chat/jinja/jinja_builtins.h"

namespace evald::kernels::jinja {

Value AsLazy(Value list, bool one_shot) {
  list.kind = Kind::kLazy;
  list.one_shot = one_shot;
  return list;
}

void RefuseLazy(const Value& sequence, const std::string& what) {
  Unsupported(what + " on " +
              (sequence.one_shot ? "a filter's result (a generator in Python)"
                                 : "a range or dict view (not a list in Python)"));
}

const ValueList& IterateItems(Interpreter& in, const Value& sequence) {
  if (sequence.IsLazy() && sequence.one_shot && !in.FirstIteration(sequence))
    RefuseLazy(sequence, "a second iteration (Python's finds nothing)");
  return *sequence.list;
}

Value LazyFilter(Interpreter& in, const Value& sequence, const std::string& name) {
  if (name == "list" || name == "first" || name == "reverse") {
    const ValueList& items = IterateItems(in, sequence);
    if (name == "list") return in.heap().NewList(Kind::kArray, items);
    if (name == "first") {
      if (items.empty()) Unsupported("first of an empty list");
      return items.front();
    }
    // Python reverses a generator into a list, a view or a range into another iterator.
    Value reversed = in.heap().NewList(Kind::kArray, ValueList(items.rbegin(), items.rend()));
    return sequence.one_shot ? reversed : AsLazy(reversed, true);
  }
  if (sequence.one_shot) RefuseLazy(sequence, "the " + name + " filter");
  if (name == "length") return Value::Integer(static_cast<double>(sequence.list->size()));
  if (name == "last") {
    if (sequence.list->empty()) Unsupported("last of an empty list");
    return sequence.list->back();
  }
  RefuseLazy(sequence, "the " + name + " filter");
}

Value LazyOperation(const std::string& op, const Value& left, const Value& right) {
  if ((op == "in" || op == "not in") && !left.IsLazy() && !right.one_shot) {
    const bool member = std::any_of(right.list->begin(), right.list->end(),
                                    [&](const Value& x) { return StrictEquals(x, left); });
    return Value::Boolean(member == (op == "in"));
  }
  RefuseLazy(left.IsLazy() ? left : right, "the " + op + " operator");
}

}  // namespace evald::kernels::jinja
