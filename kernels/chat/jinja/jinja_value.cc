#include "kernels/chat/jinja/jinja_value.h"

namespace evald::kernels::jinja {

const Value* ValueMap::Find(std::string_view key) const {
  auto it = index_.find(std::string(key));
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

void ValueMap::Set(const std::string& key, Value value) {
  auto [it, inserted] = index_.try_emplace(key, entries_.size());
  if (inserted)
    entries_.emplace_back(key, std::move(value));
  else
    entries_[it->second].second = std::move(value);
}

bool Value::Truthy() const {
  switch (kind) {
    case Kind::kUndefined:
    case Kind::kNull:
      return false;
    case Kind::kBoolean:
      return boolean;
    case Kind::kInteger:
    case Kind::kFloat:
      return number != 0 && number == number;  // NaN is falsy
    case Kind::kString:
      return !text->empty();
    case Kind::kArray:
    case Kind::kTuple:
      return !list->empty();
    case Kind::kLazy:  // a generator is always true in Python
      if (one_shot)
        Unsupported("the truth of a filter's result (a generator in Python, always true)");
      return !list->empty();
    case Kind::kObject:
    case Kind::kKeywordArgs:
      return map->size() > 0;
    case Kind::kNamespace:  // the reference does not override truthiness for namespaces
    case Kind::kFunction:
    case Kind::kLoop:
      return true;
  }
  return false;
}

const char* Value::TypeName() const {
  switch (kind) {
    case Kind::kUndefined:
      return "UndefinedValue";
    case Kind::kNull:
      return "NullValue";
    case Kind::kBoolean:
      return "BooleanValue";
    case Kind::kInteger:
      return "IntegerValue";
    case Kind::kFloat:
      return "FloatValue";
    case Kind::kString:
      return "StringValue";
    case Kind::kArray:
      return "ArrayValue";
    case Kind::kTuple:
      return "TupleValue";
    case Kind::kLazy:
      return "ArrayValue";
    case Kind::kObject:
      return "ObjectValue";
    case Kind::kKeywordArgs:
      return "KeywordArgumentsValue";
    case Kind::kNamespace:
      return "NamespaceValue";
    case Kind::kLoop:
      return "ObjectValue";
    case Kind::kFunction:
      return "FunctionValue";
  }
  return "?";
}

Value Heap::NewList(Kind kind, ValueList items) {
  budget_.Charge(static_cast<int64_t>((items.size() + 1) * sizeof(Value)));
  Value v(kind);
  v.list = &lists_.emplace_back(std::move(items));
  return v;
}

Value Heap::NewMap(Kind kind, ValueMap map) {
  budget_.Charge(static_cast<int64_t>((map.size() + 1) * (sizeof(Value) + 48)));
  Value v(kind);
  v.map = &maps_.emplace_back(std::move(map));
  return v;
}

Value Heap::NewFunction(Function fn) {
  budget_.Charge(static_cast<int64_t>(sizeof(Function)));
  Value v(Kind::kFunction);
  v.function = &functions_.emplace_back(std::move(fn));
  return v;
}

Environment* Heap::NewEnvironment(Environment* parent) {
  budget_.Charge(static_cast<int64_t>(sizeof(Environment)));
  return &environments_.emplace_back(parent);
}

Value Environment::Lookup(const std::string& name) const {
  for (const Environment* e = this; e; e = e->parent) {
    auto it = e->variables.find(name);
    if (it != e->variables.end()) return it->second;
    if (e->stale.count(name))
      Unsupported("'" + name +
                  "' read after a scope that set it ended: an earlier loop "
                  "iteration, or a {% set %} or {% filter %} block (Python's scope ends there, the "
                  "reference's does not)");
  }
  return Value::Undefined();
}

}  // namespace evald::kernels::jinja
