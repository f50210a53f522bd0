#include "kernels/chat/jinja/jinja_parser.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <set>
#include <stdexcept>
#include <string_view>

namespace evald::kernels::jinja {

namespace {

// Parsing unwinds on the first error from any depth; the error travels as this exception
// inside this file only and leaves Parse() as a Status.
struct ParseError {
  Status status;
};

[[noreturn]] void Fail(const std::string& what) {
  throw ParseError{Status::InvalidArgument("chat template syntax: " + what)};
}
[[noreturn]] void Refuse(const std::string& what) {
  throw ParseError{Status::InvalidArgument("chat template uses " + what +
                                           ", which evald's template engine does not render")};
}

NodePtr Make(NodeKind kind) {
  return std::make_unique<Node>(kind);
}
NodePtr Make(NodeKind kind, NodePtr a, NodePtr b = nullptr) {
  auto n = Make(kind);
  n->a = std::move(a);
  n->b = std::move(b);
  return n;
}

// Whether a macro's body reads one of the names Jinja gives a special meaning there.
bool UsesSpecialMacroName(const Node& node) {
  if (node.kind == NodeKind::kIdentifier &&
      (node.text == "caller" || node.text == "varargs" || node.text == "kwargs"))
    return true;
  for (const Node* child : {node.a.get(), node.b.get(), node.c.get()})
    if (child && UsesSpecialMacroName(*child)) return true;
  for (const NodeList* list : {&node.items, &node.values, &node.body, &node.alternate})
    for (const auto& child : *list)
      if (UsesSpecialMacroName(*child)) return true;
  return false;
}

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, int max_depth) : t_(tokens), max_depth_(max_depth) {}

  NodeList Program() {
    NodeList body;
    while (cur_ < t_.size()) body.push_back(Any());
    return body;
  }

 private:
  const std::vector<Token>& t_;
  size_t cur_ = 0;
  int depth_ = 0, max_depth_;

  // Every recursive descent passes through a guard, so a deeply nested template is an
  // error instead of a stack overflow.
  struct DepthGuard {
    explicit DepthGuard(Parser* p) : p_(p) {
      if (++p_->depth_ > p_->max_depth_)
        Fail("nested more than " + std::to_string(p_->max_depth_) + " levels deep");
    }
    ~DepthGuard() { --p_->depth_; }
    Parser* p_;
  };

  const Token& Peek(size_t ahead = 0) const {
    if (cur_ + ahead >= t_.size()) Fail("unexpected end of template");
    return t_[cur_ + ahead];
  }
  bool Is(TokenType type) const { return cur_ < t_.size() && t_[cur_].type == type; }
  bool IsIdentifier(std::initializer_list<std::string_view> names) const {
    size_t i = cur_;
    for (std::string_view name : names) {
      if (i >= t_.size() || t_[i].type != TokenType::kIdentifier || t_[i].value != name)
        return false;
      ++i;
    }
    return true;
  }
  bool IsStatement(std::initializer_list<std::string_view> names) const {
    if (cur_ + 1 >= t_.size() || t_[cur_].type != TokenType::kOpenStatement ||
        t_[cur_ + 1].type != TokenType::kIdentifier)
      return false;
    return std::find(names.begin(), names.end(), t_[cur_ + 1].value) != names.end();
  }
  const Token& Expect(TokenType type, const char* what) {
    const Token& tok = Peek();
    if (tok.type != type) Fail(std::string("expected ") + what);
    ++cur_;
    return tok;
  }
  void ExpectIdentifier(std::string_view name) {
    if (!IsIdentifier({name})) Fail("expected " + std::string(name));
    ++cur_;
  }
  void ExpectEnd(std::string_view name) {
    Expect(TokenType::kOpenStatement, "{%");
    ExpectIdentifier(name);
    Expect(TokenType::kCloseStatement, "%}");
  }
  // Statements up to (not including) a {% NAME %} of one of `names`.
  NodeList BlockUntil(std::initializer_list<std::string_view> names) {
    NodeList body;
    while (!IsStatement(names)) body.push_back(Any());
    return body;
  }

  NodePtr Any() {
    DepthGuard guard(this);
    const Token& tok = Peek();
    switch (tok.type) {
      case TokenType::kComment: {
        ++cur_;
        return Make(NodeKind::kComment);
      }
      case TokenType::kText: {
        auto n = Make(NodeKind::kString);
        n->text = t_[cur_++].value;
        return n;
      }
      case TokenType::kOpenStatement:
        return Statement();
      case TokenType::kOpenExpression: {
        ++cur_;
        NodePtr e = Expression();
        Expect(TokenType::kCloseExpression, "}}");
        return e;
      }
      default:
        Fail("unexpected token '" + tok.value + "'");
    }
  }

  NodePtr Statement() {
    Expect(TokenType::kOpenStatement, "{%");
    if (Peek().type != TokenType::kIdentifier) Fail("unknown statement");
    const std::string name = Peek().value;
    ++cur_;
    NodePtr result;
    if (name == "set") {
      return SetStatement();
    } else if (name == "if") {
      result = IfStatement();
      ExpectEnd("endif");
    } else if (name == "macro") {
      result = MacroStatement();
      ExpectEnd("endmacro");
    } else if (name == "for") {
      result = ForStatement();
      ExpectEnd("endfor");
    } else if (name == "break" || name == "continue") {
      Expect(TokenType::kCloseStatement, "%}");
      result = Make(name == "break" ? NodeKind::kBreak : NodeKind::kContinue);
    } else if (name == "filter") {
      result = Make(NodeKind::kFilterBlock);
      result->a = Primary();
      if (result->a->kind == NodeKind::kIdentifier && Is(TokenType::kOpenParen))
        result->a = CallExpression(std::move(result->a));
      Expect(TokenType::kCloseStatement, "%}");
      result->body = BlockUntil({"endfilter"});
      ExpectEnd("endfilter");
    } else if (name == "call") {
      Refuse("a {% call %} block");
    } else {
      Fail("unknown statement type: " + name);
    }
    return result;
  }

  NodePtr SetStatement() {
    auto n = Make(NodeKind::kSet);
    n->a = ExpressionSequence(false);
    if (Is(TokenType::kEquals)) {
      ++cur_;
      n->b = ExpressionSequence(false);
    } else {
      Expect(TokenType::kCloseStatement, "%}");
      n->body = BlockUntil({"endset"});
      Expect(TokenType::kOpenStatement, "{%");
      ExpectIdentifier("endset");
    }
    Expect(TokenType::kCloseStatement, "%}");
    return n;
  }

  NodePtr IfStatement() {
    DepthGuard guard(this);
    auto n = Make(NodeKind::kIf);
    n->a = Expression();
    Expect(TokenType::kCloseStatement, "%}");
    n->body = BlockUntil({"elif", "else", "endif"});
    if (IsStatement({"elif"})) {
      cur_ += 2;
      n->alternate.push_back(IfStatement());
    } else if (IsStatement({"else"})) {
      cur_ += 2;
      Expect(TokenType::kCloseStatement, "%}");
      n->alternate = BlockUntil({"endif"});
    }
    return n;
  }

  NodePtr MacroStatement() {
    auto n = Make(NodeKind::kMacro);
    n->a = Primary();
    if (n->a->kind != NodeKind::kIdentifier) Fail("expected identifier following macro");
    n->items = Arguments(true);
    Expect(TokenType::kCloseStatement, "%}");
    n->body = BlockUntil({"endmacro"});
    for (const auto& p : n->items)
      if (UsesSpecialMacroName(*p)) Refuse("a macro with caller, varargs or kwargs");
    for (const auto& s : n->body)
      if (UsesSpecialMacroName(*s)) Refuse("a macro with caller, varargs or kwargs");
    return n;
  }

  NodePtr ExpressionSequence(bool primary) {
    NodePtr first = primary ? Primary() : Expression();
    if (!Is(TokenType::kComma)) return first;
    auto tuple = Make(NodeKind::kTuple);
    tuple->items.push_back(std::move(first));
    while (Is(TokenType::kComma)) {
      ++cur_;
      tuple->items.push_back(primary ? Primary() : Expression());
    }
    return tuple;
  }

  NodePtr ForStatement() {
    auto n = Make(NodeKind::kFor);
    n->a = ExpressionSequence(true);
    if (n->a->kind != NodeKind::kIdentifier && n->a->kind != NodeKind::kTuple)
      Fail("expected identifier/tuple for the loop variable");
    if (!IsIdentifier({"in"})) Fail("expected `in` keyword following loop variable");
    ++cur_;
    n->b = Expression();
    Expect(TokenType::kCloseStatement, "%}");
    n->body = BlockUntil({"endfor", "else"});
    if (IsStatement({"else"})) {
      cur_ += 2;
      Expect(TokenType::kCloseStatement, "%}");
      n->alternate = BlockUntil({"endfor"});
    }
    return n;
  }

  NodePtr Expression() {
    DepthGuard guard(this);
    NodePtr a = LogicalOr();
    if (!IsIdentifier({"if"})) return a;
    ++cur_;
    NodePtr test = LogicalOr();
    if (IsIdentifier({"else"})) {
      ++cur_;
      auto n = Make(NodeKind::kTernary, std::move(test), std::move(a));
      n->c = Expression();
      return n;
    }
    return Make(NodeKind::kSelect, std::move(a), std::move(test));
  }

  NodePtr Binary(std::string op, NodePtr left, NodePtr right) {
    auto n = Make(NodeKind::kBinary, std::move(left), std::move(right));
    n->text = std::move(op);
    return n;
  }

  NodePtr LogicalOr() {
    NodePtr left = LogicalAnd();
    while (IsIdentifier({"or"})) {
      ++cur_;
      left = Binary("or", std::move(left), LogicalAnd());
    }
    return left;
  }

  NodePtr LogicalAnd() {
    NodePtr left = LogicalNot();
    while (IsIdentifier({"and"})) {
      ++cur_;
      left = Binary("and", std::move(left), LogicalNot());
    }
    return left;
  }

  NodePtr LogicalNot() {
    DepthGuard guard(this);
    NodePtr result;
    while (IsIdentifier({"not"})) {
      ++cur_;
      auto n = Make(NodeKind::kUnary, LogicalNot());
      n->text = "not";
      result = std::move(n);
    }
    return result ? std::move(result) : Comparison();
  }

  NodePtr Comparison() {
    NodePtr left = Additive();
    while (true) {
      std::string op;
      if (IsIdentifier({"not", "in"})) {
        op = "not in";
        cur_ += 2;
      } else if (IsIdentifier({"in"})) {
        op = "in";
        ++cur_;
      } else if (Is(TokenType::kComparisonOperator)) {
        op = t_[cur_++].value;
      } else {
        break;
      }
      left = Binary(op, std::move(left), Additive());
    }
    return left;
  }

  NodePtr Additive() {
    NodePtr left = Multiplicative();
    while (Is(TokenType::kAdditiveOperator)) {
      std::string op = t_[cur_++].value;
      left = Binary(op, std::move(left), Multiplicative());
    }
    return left;
  }

  NodePtr Multiplicative() {
    NodePtr left = Power();
    while (Is(TokenType::kMultiplicativeOperator)) {
      std::string op = t_[cur_++].value;
      left = Binary(op, std::move(left), Power());
    }
    return left;
  }

  NodePtr Power() {
    NodePtr left = Test();
    while (Is(TokenType::kExponentiationOperator)) {
      ++cur_;
      left = Binary("**", std::move(left), Test());
    }
    return left;
  }

  NodePtr Test() {
    NodePtr operand = Filter();
    while (IsIdentifier({"is"})) {
      ++cur_;
      bool negate = IsIdentifier({"not"});
      if (negate) ++cur_;
      NodePtr test = Primary();
      if (test->kind != NodeKind::kIdentifier) Fail("expected identifier for the test");
      operand = Make(NodeKind::kTest, std::move(operand), std::move(test));
      operand->flag = negate;
    }
    return operand;
  }

  NodePtr Filter() {
    NodePtr operand = UnarySign();
    while (Is(TokenType::kPipe)) {
      ++cur_;
      NodePtr filter = Primary();
      if (filter->kind != NodeKind::kIdentifier) Fail("expected identifier for the filter");
      if (Is(TokenType::kOpenParen)) filter = CallExpression(std::move(filter));
      operand = Make(NodeKind::kFilter, std::move(operand), std::move(filter));
    }
    return operand;
  }

  NodePtr UnarySign() {
    DepthGuard guard(this);
    const Token& tok = Peek();
    if ((tok.type == TokenType::kUnaryOperator || tok.type == TokenType::kAdditiveOperator) &&
        (tok.value == "-" || tok.value == "+")) {
      ++cur_;
      auto n = Make(NodeKind::kUnary, UnarySign());
      n->text = tok.value;
      return n;
    }
    NodePtr member = Member(Primary());
    return Is(TokenType::kOpenParen) ? CallExpression(std::move(member)) : std::move(member);
  }

  NodePtr CallExpression(NodePtr callee) {
    DepthGuard guard(this);
    auto call = Make(NodeKind::kCall, std::move(callee));
    call->items = Arguments(false);
    NodePtr e = Member(std::move(call));
    return Is(TokenType::kOpenParen) ? CallExpression(std::move(e)) : std::move(e);
  }

  NodeList Arguments(bool parameters) {
    Expect(TokenType::kOpenParen, "(");
    NodeList args = ArgumentList(parameters);
    Expect(TokenType::kCloseParen, ")");
    return args;
  }

  NodeList ArgumentList(bool parameters) {
    NodeList args;
    std::set<std::string> names;
    bool saw_keyword = false, saw_spread = false;
    while (!Is(TokenType::kCloseParen)) {
      Peek();
      const bool keyword_spread = Is(TokenType::kExponentiationOperator);
      const bool spread = Is(TokenType::kMultiplicativeOperator) && t_[cur_].value == "*";
      if (parameters && (keyword_spread || spread))
        Fail("argument unpacking is not allowed in parameter declarations");
      if (keyword_spread) {
        ++cur_;
        args.push_back(Make(NodeKind::kKeywordSpread, Expression()));
        if (Is(TokenType::kComma)) ++cur_;
        if (!Is(TokenType::kCloseParen)) Fail("`**` must be applied to the final argument");
        break;
      }
      NodePtr arg;
      if (spread) {
        if (saw_spread) Fail("only one `*` argument unpacking is allowed");
        saw_spread = true;
        ++cur_;
        arg = Make(NodeKind::kSpread, Expression());
      } else {
        arg = Expression();
        if (Is(TokenType::kEquals)) {
          ++cur_;
          if (arg->kind != NodeKind::kIdentifier) Fail("expected identifier for keyword argument");
          arg = Make(NodeKind::kKeywordArgument, std::move(arg), Expression());
        }
        if (parameters) {
          if (arg->kind != NodeKind::kIdentifier && arg->kind != NodeKind::kKeywordArgument)
            Fail("expected identifier for parameter declaration");
          const std::string& pname = arg->kind == NodeKind::kIdentifier ? arg->text : arg->a->text;
          if (!names.insert(pname).second) Fail("duplicate parameter name: " + pname);
        }
        if (arg->kind == NodeKind::kKeywordArgument)
          saw_keyword = true;
        else if (saw_keyword)
          Fail("positional arguments must come before keyword arguments");
        else if (saw_spread)
          Fail("positional arguments must not follow `*` argument unpacking");
      }
      args.push_back(std::move(arg));
      if (Is(TokenType::kComma)) ++cur_;
    }
    return args;
  }

  NodePtr SubscriptOrSlice() {
    NodeList parts;  // null entries: an omitted slice bound
    bool is_slice = false;
    while (!Is(TokenType::kCloseSquareBracket)) {
      Peek();
      if (Is(TokenType::kColon)) {
        parts.push_back(nullptr);
        ++cur_;
        is_slice = true;
      } else {
        parts.push_back(Expression());
        if (Is(TokenType::kColon)) {
          ++cur_;
          is_slice = true;
        }
      }
    }
    if (parts.empty()) Fail("expected at least one argument for member/slice expression");
    if (!is_slice) return std::move(parts[0]);
    if (parts.size() > 3) Fail("expected 0-3 arguments for slice expression");
    auto n = Make(NodeKind::kSlice);
    n->a = std::move(parts[0]);
    if (parts.size() > 1) n->b = std::move(parts[1]);
    if (parts.size() > 2) n->c = std::move(parts[2]);
    return n;
  }

  NodePtr Member(NodePtr object) {
    while (Is(TokenType::kDot) || Is(TokenType::kOpenSquareBracket)) {
      const bool computed = t_[cur_++].type == TokenType::kOpenSquareBracket;
      NodePtr property;
      if (computed) {
        property = SubscriptOrSlice();
        Expect(TokenType::kCloseSquareBracket, "]");
      } else {
        property = Primary();
        if (property->kind != NodeKind::kIdentifier && property->kind != NodeKind::kInteger)
          Fail("expected identifier or integer following dot operator");
      }
      object = Make(NodeKind::kMember, std::move(object), std::move(property));
      object->flag = computed;
    }
    return object;
  }

  NodePtr Primary() {
    DepthGuard guard(this);
    const Token& tok = Peek();
    ++cur_;
    switch (tok.type) {
      case TokenType::kNumericLiteral: {
        bool is_float = tok.value.find('.') != std::string::npos;
        auto n = Make(is_float ? NodeKind::kFloat : NodeKind::kInteger);
        n->number = std::strtod(tok.value.c_str(), nullptr);
        return n;
      }
      case TokenType::kStringLiteral: {
        auto n = Make(NodeKind::kString);
        n->text = tok.value;
        while (Is(TokenType::kStringLiteral)) n->text += t_[cur_++].value;
        return n;
      }
      case TokenType::kIdentifier: {
        auto n = Make(NodeKind::kIdentifier);
        n->text = tok.value;
        return n;
      }
      case TokenType::kOpenParen: {
        NodePtr e = ExpressionSequence(false);
        Expect(TokenType::kCloseParen, ")");
        return e;
      }
      case TokenType::kOpenSquareBracket: {
        auto n = Make(NodeKind::kArray);
        while (!Is(TokenType::kCloseSquareBracket)) {
          n->items.push_back(Expression());
          if (Is(TokenType::kComma)) ++cur_;
        }
        ++cur_;
        return n;
      }
      case TokenType::kOpenCurlyBracket: {
        auto n = Make(NodeKind::kObject);
        while (!Is(TokenType::kCloseCurlyBracket)) {
          n->items.push_back(Expression());
          Expect(TokenType::kColon, "colon between key and value in object literal");
          n->values.push_back(Expression());
          if (Is(TokenType::kComma)) ++cur_;
        }
        ++cur_;
        return n;
      }
      default:
        Fail("unexpected token '" + tok.value + "'");
    }
  }
};

}  // namespace

StatusOr<NodeList> Parse(const std::vector<Token>& tokens, int max_depth) {
  try {
    return Parser(tokens, max_depth).Program();
  } catch (const ParseError& e) {
    return e.status;
  }
}

}  // namespace evald::kernels::jinja
