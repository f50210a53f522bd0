#include "kernels/chat/jinja/jinja_lexer.h"

#include <array>
#include <utility>

#include "kernels/chat/jinja/js_text.h"

namespace evald::kernels::jinja {

namespace {

bool IsWordByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

// Whether a JavaScript multiline ^ matches at `i` (after \n, \r, U+2028 or U+2029).
bool AtLineStart(std::string_view s, size_t i) {
  if (i == 0) return true;
  if (s[i - 1] == '\n' || s[i - 1] == '\r') return true;
  return i >= 3 && s.substr(i - 3, 2) == "\xE2\x80" && (s[i - 1] == '\xA8' || s[i - 1] == '\xA9');
}

// lstrip_blocks: /^[ \t]*({[#%-])/gm -> "$1".
std::string LstripBlocks(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (AtLineStart(s, i)) {
      size_t j = i;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
      if (j + 1 < s.size() && s[j] == '{' &&
          (s[j + 1] == '#' || s[j + 1] == '%' || s[j + 1] == '-')) {
        out += s.substr(j, 2);
        i = j + 2;
        continue;
      }
    }
    out.push_back(s[i++]);
  }
  return out;
}

// trim_blocks: /([#%-]})\n/g -> "$1".
std::string TrimBlocks(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (i + 2 < s.size() && (s[i] == '#' || s[i] == '%' || s[i] == '-') && s[i + 1] == '}' &&
        s[i + 2] == '\n') {
      out += s.substr(i, 2);
      i += 3;
      continue;
    }
    out.push_back(s[i++]);
  }
  return out;
}

size_t SkipJsSpace(std::string_view s, size_t i) {
  while (i < s.size()) {
    size_t next = i;
    if (!IsJsWhiteSpace(DecodeCodePoint(s, &next))) break;
    i = next;
  }
  return i;
}

// The {% generation %} / {% endgeneration %} tag at `i`
// (/{%(-?)\s*(?:end)?generation\s*(-?)%}(\s*)/): its length including the white space after it,
// whether it strips before and after, and where that white space starts. Zero when there is none at
// `i`.
struct GenerationTag {
  size_t length = 0, space_at = 0;
  bool strip_before = false, strip_after = false;
};
GenerationTag MatchGenerationTag(std::string_view s, size_t i) {
  GenerationTag tag;
  if (s.substr(i, 2) != "{%") return tag;
  size_t j = i + 2;
  if (j < s.size() && s[j] == '-') tag.strip_before = true, ++j;
  j = SkipJsSpace(s, j);
  if (s.substr(j, 3) == "end") j += 3;
  if (s.substr(j, 10) != "generation") return tag;
  j = SkipJsSpace(s, j + 10);
  if (j < s.size() && s[j] == '-') tag.strip_after = true, ++j;
  if (s.substr(j, 2) != "%}") return tag;
  tag.space_at = j + 2;
  tag.length = SkipJsSpace(s, tag.space_at) - i;
  return tag;
}

std::string RemoveGenerationTags(std::string_view s) {
  std::string out;
  size_t last = 0;
  for (size_t i = s.find("{%"); i != std::string_view::npos; i = s.find("{%", i + 1)) {
    GenerationTag tag = MatchGenerationTag(s, i);
    if (tag.length == 0) continue;
    std::string_view before = s.substr(last, i - last);
    out += tag.strip_before ? JsTrimEnd(before) : before;
    if (!tag.strip_after) out += s.substr(tag.space_at, i + tag.length - tag.space_at);
    last = i + tag.length;
    i = last - 1;
  }
  out += s.substr(last);
  return out;
}

struct Rule {
  std::string_view text;
  TokenType type;
};
// In the reference's order: longer sequences before their prefixes.
constexpr std::array<Rule, 29> kRules = {{
    {"{%", TokenType::kOpenStatement},
    {"%}", TokenType::kCloseStatement},
    {"{{", TokenType::kOpenExpression},
    {"}}", TokenType::kCloseExpression},
    {"(", TokenType::kOpenParen},
    {")", TokenType::kCloseParen},
    {"{", TokenType::kOpenCurlyBracket},
    {"}", TokenType::kCloseCurlyBracket},
    {"[", TokenType::kOpenSquareBracket},
    {"]", TokenType::kCloseSquareBracket},
    {",", TokenType::kComma},
    {".", TokenType::kDot},
    {":", TokenType::kColon},
    {"|", TokenType::kPipe},
    {"<=", TokenType::kComparisonOperator},
    {">=", TokenType::kComparisonOperator},
    {"==", TokenType::kComparisonOperator},
    {"!=", TokenType::kComparisonOperator},
    {"<", TokenType::kComparisonOperator},
    {">", TokenType::kComparisonOperator},
    {"+", TokenType::kAdditiveOperator},
    {"-", TokenType::kAdditiveOperator},
    {"~", TokenType::kAdditiveOperator},
    {"**", TokenType::kExponentiationOperator},
    {"*", TokenType::kMultiplicativeOperator},
    {"//", TokenType::kMultiplicativeOperator},
    {"/", TokenType::kMultiplicativeOperator},
    {"%", TokenType::kMultiplicativeOperator},
    {"=", TokenType::kEquals},
}};

class Lexer {
 public:
  Lexer(std::string_view src, size_t max_tokens) : src_(src), max_tokens_(max_tokens) {}

  StatusOr<std::vector<Token>> Run() {
    while (pos_ < src_.size()) {
      if (tokens_.size() >= max_tokens_)
        return Status::InvalidArgument("chat template: more than " + std::to_string(max_tokens_) +
                                       " tokens");
      Status s = Step();
      if (!s.ok()) return s;
    }
    return std::move(tokens_);
  }

 private:
  std::string_view src_;
  size_t max_tokens_;
  size_t pos_ = 0;
  int curly_depth_ = 0;
  std::vector<Token> tokens_;

  static Status Error(std::string what) {
    return Status::InvalidArgument("chat template syntax: " + std::move(what));
  }
  bool LastIs(std::initializer_list<TokenType> types) const {
    if (tokens_.empty()) return false;
    for (TokenType t : types)
      if (tokens_.back().type == t) return true;
    return false;
  }
  char At(size_t i) const { return i < src_.size() ? src_[i] : '\0'; }
  void Push(TokenType type, std::string value) { tokens_.push_back({type, std::move(value)}); }

  // {%- and {{- trim the text before them.
  void StripTrailingWhitespace() {
    if (tokens_.empty() || tokens_.back().type != TokenType::kText) return;
    tokens_.back().value = std::string(JsTrimEnd(tokens_.back().value));
    if (tokens_.back().value.empty()) tokens_.pop_back();
  }

  // consumeWhile: the reference fails when the predicate still holds at the end of the text.
  Status SkipSpaceInTag() {
    size_t start = pos_;
    pos_ = SkipJsSpace(src_, pos_);
    if (pos_ > start && pos_ >= src_.size()) return Error("unexpected end of input");
    return Status::Ok();
  }

  Status Step() {
    if (tokens_.empty() ||
        LastIs({TokenType::kCloseStatement, TokenType::kCloseExpression, TokenType::kComment})) {
      if (ScanText()) return Status::Ok();
    }
    if (At(pos_) == '{') {
      if (At(pos_ + 1) == '#') return ScanComment();
      if (At(pos_ + 2) == '-' && (At(pos_ + 1) == '%' || At(pos_ + 1) == '{')) {
        StripTrailingWhitespace();
        bool statement = At(pos_ + 1) == '%';
        Push(statement ? TokenType::kOpenStatement : TokenType::kOpenExpression,
             statement ? "{%" : "{{");
        if (!statement) curly_depth_ = 0;
        pos_ += 3;
        return Status::Ok();
      }
    }
    EVALD_RETURN_IF_ERROR(SkipSpaceInTag());
    const char c = At(pos_);
    if (c == '-' && At(pos_ + 2) == '}' && (At(pos_ + 1) == '%' || At(pos_ + 1) == '}')) {
      bool statement = At(pos_ + 1) == '%';
      Push(statement ? TokenType::kCloseStatement : TokenType::kCloseExpression,
           statement ? "%}" : "}}");
      pos_ = SkipJsSpace(src_, pos_ + 3);
      return Status::Ok();
    }
    if (c == '-' || c == '+') {
      if (tokens_.empty() || LastIs({TokenType::kText}))
        return Error(std::string("unexpected character: ") + c);
      if (!LastIs({TokenType::kIdentifier, TokenType::kNumericLiteral, TokenType::kStringLiteral,
                   TokenType::kCloseParen, TokenType::kCloseSquareBracket}))
        return ScanSignedNumber(c);
    }
    if (ScanOperator()) return Status::Ok();
    if (c == '\'' || c == '"') return ScanString(c);
    if (IsDigit(c)) return ScanNumber();
    if (IsWordByte(c)) {
      size_t start = pos_;
      while (IsWordByte(At(pos_))) ++pos_;
      if (pos_ >= src_.size()) return Error("unexpected end of input");
      Push(TokenType::kIdentifier, std::string(src_.substr(start, pos_ - start)));
      return Status::Ok();
    }
    return Error("unexpected character: " + std::string(src_.substr(pos_, 1)));
  }

  // Text up to the next {%, {{ or {#; false when there is none before it.
  bool ScanText() {
    size_t end = pos_;
    while (true) {
      end = src_.find('{', end);
      if (end == std::string_view::npos) {
        end = src_.size();
        break;
      }
      char next = At(end + 1);
      if (next == '%' || next == '{' || next == '#') break;
      ++end;
    }
    if (end <= pos_) return false;
    Push(TokenType::kText, std::string(src_.substr(pos_, end - pos_)));
    pos_ = end;
    return true;
  }

  Status ScanComment() {
    pos_ += 2;
    bool strip_before = At(pos_) == '-';
    if (strip_before) ++pos_;
    size_t end = src_.find("#}", pos_);
    if (end == std::string_view::npos) return Error("missing end of comment tag");
    std::string comment(src_.substr(pos_, end - pos_));
    bool strip_after = !comment.empty() && comment.back() == '-';
    if (strip_after) comment.pop_back();
    if (strip_before) StripTrailingWhitespace();
    Push(TokenType::kComment, std::move(comment));
    pos_ = end + 2;
    if (strip_after) pos_ = SkipJsSpace(src_, pos_);
    return Status::Ok();
  }

  Status ConsumeDigits(std::string* out) {
    size_t start = pos_;
    while (IsDigit(At(pos_))) ++pos_;
    if (pos_ > start && pos_ >= src_.size()) return Error("unexpected end of input");
    *out += src_.substr(start, pos_ - start);
    return Status::Ok();
  }

  // A sign where an operand is expected: a signed number literal, or a unary operator.
  Status ScanSignedNumber(char sign) {
    ++pos_;
    std::string num;
    EVALD_RETURN_IF_ERROR(ConsumeDigits(&num));
    if (!num.empty() && At(pos_) == '.' && IsDigit(At(pos_ + 1))) {
      ++pos_;
      num += '.';
      EVALD_RETURN_IF_ERROR(ConsumeDigits(&num));
    }
    Push(num.empty() ? TokenType::kUnaryOperator : TokenType::kNumericLiteral,
         std::string(1, sign) + num);
    return Status::Ok();
  }

  Status ScanNumber() {
    std::string num;
    EVALD_RETURN_IF_ERROR(ConsumeDigits(&num));
    if (!LastIs({TokenType::kDot}) && At(pos_) == '.' && IsDigit(At(pos_ + 1))) {
      ++pos_;
      num += '.';
      EVALD_RETURN_IF_ERROR(ConsumeDigits(&num));
    }
    Push(TokenType::kNumericLiteral, std::move(num));
    return Status::Ok();
  }

  bool ScanOperator() {
    for (const Rule& rule : kRules) {
      if (rule.text == "}}" && curly_depth_ > 0) continue;
      if (src_.substr(pos_, rule.text.size()) != rule.text) continue;
      Push(rule.type, std::string(rule.text));
      if (rule.type == TokenType::kOpenExpression) curly_depth_ = 0;
      if (rule.type == TokenType::kOpenCurlyBracket) ++curly_depth_;
      if (rule.type == TokenType::kCloseCurlyBracket) --curly_depth_;
      pos_ += rule.text.size();
      return true;
    }
    return false;
  }

  Status ScanString(char quote) {
    ++pos_;
    std::string str;
    while (true) {
      if (pos_ >= src_.size()) return Error("unexpected end of input in a string");
      char c = src_[pos_];
      if (c == quote) break;
      ++pos_;
      if (c != '\\') {
        str.push_back(c);
        continue;
      }
      if (pos_ >= src_.size()) return Error("unexpected end of input in a string");
      char e = src_[pos_++];
      EVALD_RETURN_IF_ERROR(AppendEscape(e, &str));
    }
    ++pos_;
    Push(TokenType::kStringLiteral, std::move(str));
    return Status::Ok();
  }

  Status AppendEscape(char e, std::string* str) {
    if (e == 'x' || e == 'u') {
      size_t len = e == 'x' ? 2 : 4;
      std::string_view hex = src_.substr(pos_, len);
      uint32_t cp = 0;
      for (char h : hex) {
        int d = IsDigit(h)               ? h - '0'
                : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                         : -1;
        if (d < 0) return Error("invalid hexadecimal escape sequence");
        cp = cp * 16 + static_cast<uint32_t>(d);
      }
      if (hex.size() != len) return Error("invalid hexadecimal escape sequence");
      if (cp >= 0xD800 && cp <= 0xDFFF)
        return Status::InvalidArgument(
            "chat template uses a \\u escape of a UTF-16 surrogate, which evald's template "
            "engine does not render");
      AppendCodePoint(cp, str);
      pos_ += len;
      return Status::Ok();
    }
    static constexpr std::pair<char, char> kEscapes[] = {{'n', '\n'},  {'t', '\t'}, {'r', '\r'},
                                                         {'b', '\b'},  {'f', '\f'}, {'v', '\v'},
                                                         {'\'', '\''}, {'"', '"'},  {'\\', '\\'}};
    for (auto [from, to] : kEscapes) {
      if (from == e) {
        str->push_back(to);
        return Status::Ok();
      }
    }
    return Error(std::string("unexpected escaped character: ") + e);
  }
};

}  // namespace

std::string PreprocessTemplate(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  return RemoveGenerationTags(TrimBlocks(LstripBlocks(text)));
}

StatusOr<std::vector<Token>> Tokenize(std::string_view text, size_t max_tokens) {
  std::string src = PreprocessTemplate(text);
  return Lexer(src, max_tokens).Run();
}

}  // namespace evald::kernels::jinja
