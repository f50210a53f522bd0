// Evaluation of a parsed chat template, statement by statement, by @huggingface/jinja's rules:
// its scoping (a for loop and a macro call open a scope; if and set do not), its truthiness,
// its operators. Where that engine and Python's Jinja2 (what transformers and vLLM render
// with, so what a model was tuned on) would write different bytes, the construct is refused by
// name instead (jinja_builtins.h, jinja_filters.h, jinja_methods.h): a prompt is either the one
// both agree on or an error.
#pragma once

#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kernels/chat/jinja/jinja_ast.h"
#include "kernels/chat/jinja/jinja_value.h"
#include "kernels/chat/jinja/render_error.h"

namespace evald::kernels::jinja {

class Interpreter {
 public:
  Interpreter(Heap& heap, WorkBudget& budget, int max_call_depth)
      : heap_(heap), budget_(budget), max_call_depth_(max_call_depth) {}

  // The template's output; throws RenderError.
  std::string Run(const NodeList& program, Environment* globals);

  Value Evaluate(const Node& node, Environment* env);
  // Positional arguments, then (when there are any) one kKeywordArgs value with the rest.
  std::vector<Value> CallArguments(const NodeList& args, Environment* env);
  // The same split in two: positional values and keyword values by name.
  std::pair<std::vector<Value>, ValueMap> SplitArguments(const NodeList& args, Environment* env);

  Heap& heap() { return heap_; }
  WorkBudget& budget() { return budget_; }
  // Whether this is the first iteration of a generator (a one-shot lazy sequence).
  bool FirstIteration(const Value& generator) { return iterated_.insert(generator.list).second; }

 private:
  enum class Flow { kNormal, kBreak, kContinue };
  struct LoopItems {
    std::vector<Value> items;       // what the loop runs over, after its filter
    std::vector<Value> candidates;  // with a filter: the iterable's items before it
    std::vector<size_t> positions;  // with a filter: each run item's place among the candidates
  };

  Flow RenderBlock(const NodeList& statements, Environment* env, std::string* out);
  Flow RenderIf(const Node& node, Environment* env, std::string* out);
  void RenderFor(const Node& node, Environment* env, std::string* out);
  void ForgetEarlierIteration(Environment* scope);
  LoopItems ForItems(const Node& node, Environment* scope);
  bool PassesLoopFilter(const Node& node, const Value& item, Environment* parent);
  void RetestLoopFilter(const Node& node, const LoopItems& items, size_t next, Environment* scope,
                        size_t* tested);
  void BindLoopVariable(const Node& target, const Value& item, Environment* scope);
  void ExecuteSet(const Node& node, Environment* env);
  void DefineMacro(const Node& node, Environment* env);
  void BindMacroArguments(const Node& macro, std::vector<Value> args, Environment* scope);
  std::string RenderToString(const NodeList& body, Environment* env, const char* where);
  std::string RenderBlockScope(const NodeList& body, Environment* env, const char* where);

  Value Binary(const Node& node, Environment* env);
  Value Unary(const Node& node, Environment* env);
  Value Member(const Node& node, Environment* env);
  Value Slice(const Value& object, const Node& slice, Environment* env);
  Value Call(const Node& node, Environment* env);
  Value Literal(const Node& node, Environment* env);
  void Append(std::string* out, const std::string& text);

  Heap& heap_;
  WorkBudget& budget_;
  int max_call_depth_;
  int depth_ = 0;
  std::unordered_set<const ValueList*> iterated_;  // generators iterated so far
};

}  // namespace evald::kernels::jinja
