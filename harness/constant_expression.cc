#include "harness/constant_expression.h"

#include <cctype>

namespace evald {

namespace {

using Kind = VerilogToken::Kind;
using Value = std::optional<int64_t>;

int DigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;  // x, z, ? and anything else
}

// "[size]'[s]<base><digits>" or plain decimal digits, underscores allowed.
Value ParseNumberText(const std::string& s) {
  const size_t tick = s.find('\'');
  if (tick == std::string::npos) {
    int64_t v = 0;
    bool any = false;
    for (char c : s) {
      if (c == '_') continue;
      if (c < '0' || c > '9') return std::nullopt;
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v))
        return std::nullopt;
      any = true;
    }
    return any ? Value(v) : std::nullopt;
  }
  int64_t size = 0;
  if (tick > 0) {
    auto sz = ParseNumberText(s.substr(0, tick));
    if (!sz || *sz <= 0) return std::nullopt;
    size = *sz;
  }
  size_t i = tick + 1;
  bool is_signed = false;
  if (i < s.size() && (s[i] == 's' || s[i] == 'S')) {
    is_signed = true;
    ++i;
  }
  if (i >= s.size()) return std::nullopt;
  int base = 0;
  switch (std::tolower(static_cast<unsigned char>(s[i]))) {
    case 'b':
      base = 2;
      break;
    case 'o':
      base = 8;
      break;
    case 'd':
      base = 10;
      break;
    case 'h':
      base = 16;
      break;
    default:
      return std::nullopt;
  }
  uint64_t v = 0;
  bool any = false;
  for (++i; i < s.size(); ++i) {
    if (s[i] == '_') continue;
    int d = DigitValue(s[i]);
    if (d < 0 || d >= base) return std::nullopt;
    if (v > (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base))
      return std::nullopt;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    any = true;
  }
  if (!any) return std::nullopt;
  if (size > 0 && size < 64) {
    v &= (uint64_t{1} << size) - 1;
    if (is_signed && (v >> (size - 1)) & 1) return static_cast<int64_t>(v - (uint64_t{1} << size));
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(v);
}

bool Adjacent(const VerilogToken& a, const VerilogToken& b) {
  return a.text.data() + a.text.size() == b.text.data();
}

}  // namespace

std::optional<int64_t> ParseNumberLiteral(const std::vector<VerilogToken>& t, size_t i, size_t end,
                                          size_t* next) {
  *next = i;
  if (i >= end) return std::nullopt;
  std::string s;
  size_t j = i;
  if (t[j].kind == Kind::kNumber) {
    s = std::string(t[j++].text);
    if (s.find('\'') == std::string::npos && j < end && t[j].kind == Kind::kPunct &&
        t[j].text == "'")
      s += t[j++].text;  // "8 'd255"
  } else if (t[j].kind == Kind::kPunct && t[j].text == "'") {
    s = "'";
    ++j;
  } else {
    return std::nullopt;
  }
  // The base and digits may follow the tick as further tokens ("'h1F", "8'h FF", "'d 10").
  while (!s.empty() && j < end && (t[j].kind == Kind::kIdentifier || t[j].kind == Kind::kNumber)) {
    const size_t tick = s.find('\'');
    if (tick == std::string::npos) break;
    const std::string after = s.substr(tick + 1);
    bool has_digits =
        after.size() > 1 && !(after.size() == 2 && (after[0] == 's' || after[0] == 'S'));
    if (has_digits) break;
    s += t[j++].text;
  }
  *next = j;
  return ParseNumberText(s);
}

class ConstantParser {
 public:
  ConstantParser(const ConstantScope& scope, TokenRange range, int depth)
      : scope_(scope), t_(scope.tokens_), i_(range.begin), end_(range.end), depth_(depth) {}

  Value ParseAll() {
    if (depth_ > kMaxConstantDepth) return std::nullopt;
    Value v = Conditional();
    return i_ == end_ ? v : std::nullopt;
  }

 private:
  // The operator at the cursor, adjacent punctuation merged ("<", "<" -> "<<").
  std::string PeekOp(size_t* width) const {
    static const char* const kOps[] = {"<<<", ">>>", "===", "!==", "**", "<<", ">>", "<=",
                                       ">=",  "==",  "!=",  "&&",  "||", "~^", "^~"};
    *width = 0;
    if (i_ >= end_ || t_[i_].kind != Kind::kPunct) return "";
    for (const char* op : kOps) {
      const size_t n = std::char_traits<char>::length(op);
      if (i_ + n > end_) continue;
      bool match = true;
      for (size_t k = 0; k < n && match; ++k) {
        const auto& tok = t_[i_ + k];
        match = tok.kind == Kind::kPunct && tok.text[0] == op[k] &&
                (k == 0 || Adjacent(t_[i_ + k - 1], tok));
      }
      if (match) {
        *width = n;
        return op;
      }
    }
    *width = 1;
    return std::string(t_[i_].text);
  }
  bool Accept(std::string_view op) {
    size_t w;
    if (PeekOp(&w) != op) return false;
    i_ += w;
    return true;
  }

  Value Conditional() {
    Value c = Binary(0);
    if (!Accept("?")) return c;
    Value a = Conditional();
    if (!Accept(":")) return std::nullopt;
    Value b = Conditional();
    if (!c || !a || !b) return std::nullopt;
    return *c ? a : b;
  }

  // Binary operators by precedence level, lowest first.
  static int Level(const std::string& op) {
    static const std::pair<const char*, int> kLevels[] = {
        {"||", 0}, {"&&", 1}, {"|", 2},   {"^", 3},   {"~^", 3},  {"^~", 3}, {"&", 4},
        {"==", 5}, {"!=", 5}, {"===", 5}, {"!==", 5}, {"<", 6},   {"<=", 6}, {">", 6},
        {">=", 6}, {"<<", 7}, {">>", 7},  {"<<<", 7}, {">>>", 7}, {"+", 8},  {"-", 8},
        {"*", 9},  {"/", 9},  {"%", 9},   {"**", 10}};
    for (const auto& [o, l] : kLevels)
      if (op == o) return l;
    return -1;
  }

  Value Binary(int min_level) {
    Value lhs = Unary();
    while (true) {
      size_t w;
      std::string op = PeekOp(&w);
      int level = Level(op);
      if (level < min_level || level < 0) return lhs;
      i_ += w;
      Value rhs = Binary(op == "**" ? level : level + 1);  // ** groups to the right
      lhs = Apply(op, lhs, rhs);
    }
  }

  static Value Apply(const std::string& op, Value a, Value b) {
    if (!a || !b) return std::nullopt;
    int64_t x = *a, y = *b, r = 0;
    if (op == "+") return __builtin_add_overflow(x, y, &r) ? Value() : Value(r);
    if (op == "-") return __builtin_sub_overflow(x, y, &r) ? Value() : Value(r);
    if (op == "*") return __builtin_mul_overflow(x, y, &r) ? Value() : Value(r);
    if (op == "/") return y == 0 || (x == INT64_MIN && y == -1) ? Value() : Value(x / y);
    if (op == "%") return y == 0 || (x == INT64_MIN && y == -1) ? Value() : Value(x % y);
    if (op == "**") {
      if (y < 0 || y > 62) return x == 1 ? Value(1) : Value();
      int64_t p = 1;
      for (int64_t k = 0; k < y; ++k)
        if (__builtin_mul_overflow(p, x, &p)) return std::nullopt;
      return p;
    }
    if (op == "<<" || op == "<<<") return y < 0 || y > 62 || x < 0 ? Value() : Value(x << y);
    if (op == ">>" || op == ">>>") return y < 0 || y > 63 || x < 0 ? Value() : Value(x >> y);
    if (op == "<") return x < y;
    if (op == "<=") return x <= y;
    if (op == ">") return x > y;
    if (op == ">=") return x >= y;
    if (op == "==" || op == "===") return x == y;
    if (op == "!=" || op == "!==") return x != y;
    if (op == "&&") return x && y;
    if (op == "||") return x || y;
    if (op == "&") return x & y;
    if (op == "|") return x | y;
    if (op == "^") return x ^ y;
    if (op == "~^" || op == "^~") return ~(x ^ y);
    return std::nullopt;
  }

  Value Unary() {
    if (Accept("-")) {
      Value v = Unary();
      return v && *v != INT64_MIN ? Value(-*v) : Value();
    }
    if (Accept("+")) return Unary();
    if (Accept("!")) {
      Value v = Unary();
      return v ? Value(!*v) : Value();
    }
    if (Accept("~")) {
      Value v = Unary();
      return v ? Value(~*v) : Value();
    }
    return Primary();
  }

  Value Primary() {
    if (i_ >= end_) return std::nullopt;
    const VerilogToken& tok = t_[i_];
    if (Accept("(")) {
      Value v = Conditional();
      return Accept(")") ? v : Value();
    }
    if (tok.kind == Kind::kNumber || (tok.kind == Kind::kPunct && tok.text == "'")) {
      size_t next;
      Value v = ParseNumberLiteral(t_, i_, end_, &next);
      i_ = next > i_ ? next : end_;
      return v;
    }
    if (tok.kind == Kind::kSystemName && tok.text == "$clog2") {
      ++i_;
      if (!Accept("(")) return std::nullopt;
      Value v = Conditional();
      if (!Accept(")") || !v || *v < 0) return std::nullopt;
      int64_t bits = 0;
      while (bits < 63 && (int64_t{1} << bits) < *v) ++bits;
      return bits;
    }
    if (tok.kind == Kind::kIdentifier) {
      ++i_;
      return scope_.Lookup(tok.text, depth_ + 1);
    }
    return std::nullopt;
  }

  const ConstantScope& scope_;
  const std::vector<VerilogToken>& t_;
  size_t i_, end_;
  int depth_;
};

void ConstantScope::Define(std::string_view name, TokenRange expression) {
  names_[std::string(name)] = expression;
  values_.clear();
}

std::optional<int64_t> ConstantScope::Lookup(std::string_view name, int depth) const {
  auto known = values_.find(name);
  if (known != values_.end()) return known->second;  // also: unknown while in progress
  auto it = names_.find(name);
  if (it == names_.end()) return std::nullopt;
  values_[std::string(name)] = std::nullopt;
  std::optional<int64_t> v = Evaluate(it->second, depth);
  values_[std::string(name)] = v;
  return v;
}

std::optional<int64_t> ConstantScope::Evaluate(TokenRange expression) const {
  return Evaluate(expression, 0);
}

std::optional<int64_t> ConstantScope::Evaluate(TokenRange expression, int depth) const {
  if (expression.end > tokens_.size() || expression.begin >= expression.end) return std::nullopt;
  return ConstantParser(*this, expression, depth).ParseAll();
}

}  // namespace evald
