// The for statement: the items a loop runs over and its `if` filter, the `loop` object, and the
// scope of each iteration, where Python's Jinja2 and @huggingface/jinja differ (a fresh scope per
// iteration in Python, and the filter tested as the loop reaches each item) refused by name.
#include <algorithm>

#include "kernels/chat/jinja/jinja_interpreter.h"
#include "kernels/chat/jinja/lazy_sequence.h"

namespace evald::kernels::jinja {

namespace {

// The `if` of `for x in items if test`, or null.
const Node* LoopFilter(const Node& for_node) {
  return for_node.b->kind == NodeKind::kSelect ? for_node.b->b.get() : nullptr;
}

}  // namespace

void Interpreter::BindLoopVariable(const Node& target, const Value& item, Environment* scope) {
  if (target.kind == NodeKind::kIdentifier) {
    scope->Set(target.text, item);
    return;
  }
  for (size_t j = 0; j < target.items.size(); ++j) {
    if (target.items[j]->kind != NodeKind::kIdentifier)
      TemplateError("cannot unpack to a non-identifier");
    const bool has = item.IsArray() && j < item.list->size();
    scope->Set(target.items[j]->text, has ? (*item.list)[j] : Value::Undefined());
  }
}

// Whether `item` passes the loop's filter, evaluated in a scope of its own over `parent`.
bool Interpreter::PassesLoopFilter(const Node& node, const Value& item, Environment* parent) {
  Environment* test_scope = heap_.NewEnvironment(parent);
  BindLoopVariable(*node.a, item, test_scope);
  return Evaluate(*LoopFilter(node), test_scope).Truthy();
}

// The items a for loop runs over, after its `if` filter.
Interpreter::LoopItems Interpreter::ForItems(const Node& node, Environment* scope) {
  const Node* iterable_node = LoopFilter(node) ? node.b->a.get() : node.b.get();
  Value iterable = Evaluate(*iterable_node, scope);
  std::vector<Value> candidates;
  if (iterable.IsArray() || iterable.IsLazy()) {
    candidates = IterateItems(*this, iterable);
  } else if (iterable.kind == Kind::kLoop) {
    Unsupported("a for loop over a loop object (Python iterates its items)");
  } else if (iterable.IsObject()) {
    for (const auto& entry : iterable.map->entries())
      candidates.push_back(Value::String(entry.first));
  } else {
    TemplateError(std::string("expected iterable or object type in for loop: got ") +
                  iterable.TypeName());
  }
  const Node& target = *node.a;
  const bool filtered = LoopFilter(node) != nullptr;
  LoopItems out;
  if (target.kind == NodeKind::kIdentifier && !filtered) {
    out.items = std::move(candidates);
    return out;
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Value& current = candidates[i];
    budget_.Charge(1);
    if (target.kind == NodeKind::kTuple) {
      if (current.kind != Kind::kArray) TemplateError("cannot unpack a non-iterable type");
      if (current.list->size() != target.items.size())
        TemplateError(current.list->size() < target.items.size() ? "too few items to unpack"
                                                                 : "too many items to unpack");
    }
    if (filtered && !PassesLoopFilter(node, current, scope)) continue;
    out.items.push_back(current);
    if (filtered) out.positions.push_back(i);
  }
  if (filtered) out.candidates = std::move(candidates);
  return out;
}

// The reference tests a loop filter on every item before the first iteration, Python on each
// item as the loop reaches it, after the bodies before it have run. Before run item `next` (or,
// with `next` past the last, at the loop's end) the candidates Python would have tested by then
// are tested again; where a body has changed an answer, the loop is refused.
void Interpreter::RetestLoopFilter(const Node& node, const LoopItems& items, size_t next,
                                   Environment* scope, size_t* tested) {
  if (!LoopFilter(node)) return;
  const size_t end =
      next < items.positions.size() ? items.positions[next] + 1 : items.candidates.size();
  size_t kept = std::lower_bound(items.positions.begin(), items.positions.end(), *tested) -
                items.positions.begin();
  for (; *tested < end; ++*tested) {
    const bool was_kept = kept < items.positions.size() && items.positions[kept] == *tested;
    kept += was_kept;
    if (PassesLoopFilter(node, items.candidates[*tested], scope->parent) != was_kept)
      Unsupported(
          "a loop filter whose answer the loop body changes (Python tests each item as "
          "the loop reaches it)");
  }
}

// What a loop body set in the iteration before (the loop variables are bound again next).
void Interpreter::ForgetEarlierIteration(Environment* scope) {
  for (const auto& entry : scope->variables) scope->stale.insert(entry.first);
  scope->variables.clear();
}

void Interpreter::RenderFor(const Node& node, Environment* env, std::string* out) {
  budget_.Charge(1);
  Environment* scope = heap_.NewEnvironment(env);
  const LoopItems loop_items = ForItems(node, scope);
  const std::vector<Value>& items = loop_items.items;
  size_t tested = 0;
  bool broke = false;
  bool no_iteration = true;
  const double n = static_cast<double>(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const double k = static_cast<double>(i);
    ValueMap loop;
    loop.Set("index", Value::Integer(k + 1));
    loop.Set("index0", Value::Integer(k));
    loop.Set("revindex", Value::Integer(n - k));
    loop.Set("revindex0", Value::Integer(n - k - 1));
    loop.Set("first", Value::Boolean(i == 0));
    loop.Set("last", Value::Boolean(i + 1 == items.size()));
    loop.Set("length", Value::Integer(n));
    loop.Set("previtem", i > 0 ? items[i - 1] : Value::Undefined());
    loop.Set("nextitem", i + 1 < items.size() ? items[i + 1] : Value::Undefined());
    RetestLoopFilter(node, loop_items, i, scope, &tested);
    ForgetEarlierIteration(scope);
    scope->Set("loop", heap_.NewMap(Kind::kLoop, std::move(loop)));
    BindLoopVariable(*node.a, items[i], scope);
    const size_t written = out->size();
    Flow f = RenderBlock(node.body, scope, out);
    // The reference drops what an iteration wrote before its break or continue; Python keeps it.
    if (f != Flow::kNormal && out->size() > written)
      Unsupported("output before a break or continue in the same loop iteration");
    if (f == Flow::kContinue) continue;
    if (f == Flow::kBreak) {
      broke = true;
      break;
    }
    no_iteration = false;
  }
  if (!broke) RetestLoopFilter(node, loop_items, items.size(), scope, &tested);
  if (no_iteration) {
    std::string alt;
    if (RenderBlock(node.alternate, scope, &alt) != Flow::kNormal)
      TemplateError("break or continue outside a loop");
    Append(out, alt);
  }
}

}  // namespace evald::kernels::jinja
