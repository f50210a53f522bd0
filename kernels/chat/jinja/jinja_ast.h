// The syntax tree of a chat template: one node type with a kind, in the shapes
// @huggingface/jinja's parser builds (so that evaluation can follow the same rules).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace evald::kernels::jinja {

enum class NodeKind {
  // Statements.
  kIf,   // a: test; body; alternate
  kFor,  // a: loop variable (identifier or tuple); b: iterable; body; alternate: else
  kBreak,
  kContinue,
  kSet,          // a: assignee; b: value (or null: the body is the value)
  kMacro,        // a: name; items: parameters; body
  kFilterBlock,  // a: filter (identifier or call); body
  kComment,
  // Expressions. Template text is a kString node.
  kIdentifier,       // text
  kInteger,          // number
  kFloat,            // number
  kString,           // text
  kArray,            // items
  kTuple,            // items
  kObject,           // items: keys; values
  kBinary,           // text: operator; a, b
  kUnary,            // text: operator; a
  kFilter,           // a: operand; b: filter (identifier or call)
  kTest,             // a: operand; b: test identifier; flag: negated
  kSelect,           // a: value; b: condition (an if without else)
  kTernary,          // a: condition; b: if true; c: if false
  kCall,             // a: callee; items: arguments
  kMember,           // a: object; b: property; flag: computed ([...] rather than .name)
  kSlice,            // a, b, c: start, stop, step (each may be null)
  kKeywordArgument,  // a: key (identifier); b: value
  kSpread,           // a: *argument
  kKeywordSpread,    // a: **argument
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using NodeList = std::vector<NodePtr>;

struct Node {
  explicit Node(NodeKind k) : kind(k) {}
  NodeKind kind;
  std::string text;
  double number = 0;
  bool flag = false;
  NodePtr a, b, c;
  NodeList items, values, body, alternate;
};

}  // namespace evald::kernels::jinja
