// The values a chat template computes with, typed as @huggingface/jinja types them (its
// IntegerValue and FloatValue are both JavaScript doubles, its strings JavaScript strings).
// Lists, mappings and functions live in the render's arena (jinja::Heap) and values point at
// them: a template can make a namespace refer to itself, and nothing it builds outlives the
// render, so no reference counting (and no cycle) is involved.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kernels/chat/jinja/render_error.h"

namespace evald::kernels::jinja {

enum class Kind {
  kUndefined,
  kNull,
  kBoolean,
  kInteger,
  kFloat,
  kString,
  kArray,
  kTuple,  // an ArrayValue too, but not JSON-serialisable
  // An ArrayValue in the reference that Python holds as something else: a generator (what
  // select, selectattr, map, unique, reverse and the items filter return), a dict view
  // (.items(), .keys(), .values()) or a range. Its items are in `list`, but Python cannot index
  // it, take its length (a generator), print it, serialise it or compare it as a list, so only
  // what both engines do alike with it is allowed (lazy_sequence.h); anything else is refused.
  kLazy,
  kObject,       // a mapping
  kKeywordArgs,  // a call's keyword arguments, passed last to a function
  kNamespace,    // namespace(): the one mutable mapping
  // A for loop's `loop`: a mapping in the reference, a LoopContext in Python (iterable, callable,
  // no mapping), so only its attributes and the tests both answer alike are allowed.
  kLoop,
  kFunction,
};

struct Value;
struct Environment;
using ValueList = std::vector<Value>;

class ValueMap;

// A callable: a global (range, namespace, ...), a bound method of a value, or a macro. Its
// arguments are positional, then one kKeywordArgs value when the call had keyword arguments.
using Function = std::function<Value(std::vector<Value>& args)>;

struct Value {
  Value() = default;  // undefined
  explicit Value(Kind k) : kind(k) {}

  Kind kind = Kind::kUndefined;
  bool boolean = false;
  double number = 0;
  std::shared_ptr<const std::string> text;  // kString (shared: reads copy no bytes)
  ValueList* list = nullptr;                // kArray, kTuple, kLazy
  ValueMap* map = nullptr;                  // kObject, kKeywordArgs, kNamespace, kLoop
  const Function* function = nullptr;       // kFunction
  bool one_shot = false;  // kLazy: a generator, which Python's second iteration finds empty
  bool py_tuple = false;  // kArray: a tuple in Python (a dict's pairs), an array in the reference
  // kString: a Markup in Python (what |safe returns, and what Markup's own methods and the string
  // filters make of one), whose + and methods HTML-escape their plain string operands.
  bool py_markup = false;

  static Value Undefined() { return {}; }
  static Value Null() { return Value(Kind::kNull); }
  static Value Boolean(bool b) {
    Value v(Kind::kBoolean);
    v.boolean = b;
    return v;
  }
  static Value Integer(double n) { return Number(Kind::kInteger, n); }
  static Value Float(double n) { return Number(Kind::kFloat, n); }
  static Value String(std::string s) {
    Value v(Kind::kString);
    v.text = std::make_shared<const std::string>(std::move(s));
    return v;
  }

  const std::string& str() const { return *text; }
  bool IsNumber() const { return kind == Kind::kInteger || kind == Kind::kFloat; }
  bool IsArray() const { return kind == Kind::kArray || kind == Kind::kTuple; }
  bool IsLazy() const { return kind == Kind::kLazy; }
  bool IsObject() const { return kind == Kind::kObject || kind == Kind::kKeywordArgs; }
  // ObjectValue or NamespaceValue: what attribute look-ups and selectattr accept.
  bool IsAttributeContainer() const { return IsObject() || kind == Kind::kNamespace; }
  bool Truthy() const;
  const char* TypeName() const;  // the reference's type names, for messages

 private:
  static Value Number(Kind k, double n) {
    Value v(k);
    v.number = n;
    return v;
  }
};

// A mapping that keeps insertion order (JavaScript's Map).
class ValueMap {
 public:
  const Value* Find(std::string_view key) const;
  void Set(const std::string& key, Value value);
  size_t size() const { return entries_.size(); }
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, Value>> entries_;
  std::unordered_map<std::string, size_t> index_;
};

// Everything one render allocates, each allocation charged against the render's work budget
// by its size (a value is charged as its bytes), so the budget bounds memory as well as time.
class Heap {
 public:
  explicit Heap(WorkBudget& budget) : budget_(budget) {}
  Value NewList(Kind kind, ValueList items);
  Value NewMap(Kind kind, ValueMap map = {});
  Value NewFunction(Function fn);
  Environment* NewEnvironment(Environment* parent);

 private:
  std::deque<ValueList> lists_;
  std::deque<ValueMap> maps_;
  std::deque<Function> functions_;
  std::deque<Environment> environments_;
  WorkBudget& budget_;
};

// A scope: a for loop's body, a macro's call, the template's globals.
struct Environment {
  explicit Environment(Environment* p) : parent(p) {}
  Environment* parent;
  std::unordered_map<std::string, Value> variables;
  // Names set in a scope Python has ended and the reference has not (an earlier iteration of a
  // loop body, a {% set %} or {% filter %} block inside this scope): reading one before it is
  // set again is refused.
  std::unordered_set<std::string> stale;

  Value Lookup(const std::string& name) const;
  void Set(const std::string& name, Value value) {
    stale.erase(name);
    variables[name] = std::move(value);
  }
  // `name` set in a scope Python has ended here (see `stale`).
  void Forget(const std::string& name) {
    variables.erase(name);
    stale.insert(name);
  }
};

}  // namespace evald::kernels::jinja
