#include "harness/verilog_lexer.h"

namespace evald {

namespace {
bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsIdentChar(char c) {
  return IsIdentStart(c) || (c >= '0' && c <= '9') || c == '$';
}
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// The end (one past) of the token starting at `i`, and its kind.
struct Span {
  size_t end;
  VerilogToken::Kind kind;
};

Span ScanToken(std::string_view s, size_t i) {
  using Kind = VerilogToken::Kind;
  const char c = s[i];
  if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
    size_t end = s.find('\n', i);
    return {end == std::string_view::npos ? s.size() : end, Kind::kComment};
  }
  if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
    size_t end = s.find("*/", i + 2);
    return {end == std::string_view::npos ? s.size() : end + 2, Kind::kComment};
  }
  if (c == '"') {
    size_t j = i + 1;
    while (j < s.size() && s[j] != '"' && s[j] != '\n')
      j += (s[j] == '\\' && j + 1 < s.size() && s[j + 1] != '\n') ? 2 : 1;
    return {j < s.size() && s[j] == '"' ? j + 1 : j, Kind::kString};
  }
  if (c == '\\') {  // escaped identifier: up to white space
    size_t j = i + 1;
    while (j < s.size() && !IsSpace(s[j])) ++j;
    return {j, Kind::kIdentifier};
  }
  if (c == '$' || c == '`' || IsIdentStart(c)) {
    size_t j = i + 1;
    while (j < s.size() && IsIdentChar(s[j])) ++j;
    return {j, c == '$' ? Kind::kSystemName : c == '`' ? Kind::kDirective : Kind::kIdentifier};
  }
  if (c >= '0' && c <= '9') {
    size_t j = i + 1;
    while (j < s.size() && (IsIdentChar(s[j]) || s[j] == '\'')) ++j;
    return {j, Kind::kNumber};
  }
  return {i + 1, Kind::kPunct};
}

// The token's text as VerilogToken describes it.
std::string_view TokenText(std::string_view s, size_t i, Span span) {
  using Kind = VerilogToken::Kind;
  if (span.kind == Kind::kString) {
    size_t end = span.end;
    if (end > i + 1 && s[end - 1] == '"') --end;
    return s.substr(i + 1, end - i - 1);
  }
  if (span.kind == Kind::kDirective || (span.kind == Kind::kIdentifier && s[i] == '\\'))
    return s.substr(i + 1, span.end - i - 1);
  return s.substr(i, span.end - i);
}

}  // namespace

std::vector<VerilogToken> TokenizeVerilog(std::string_view s, bool keep_comments) {
  std::vector<VerilogToken> out;
  size_t i = 0;
  int line = 1;
  while (i < s.size()) {
    if (IsSpace(s[i])) {
      if (s[i] == '\n') ++line;
      ++i;
      continue;
    }
    Span span = ScanToken(s, i);
    if (span.kind != VerilogToken::Kind::kComment || keep_comments) {
      VerilogToken t{span.kind, TokenText(s, i, span), line};
      t.escaped = span.kind == VerilogToken::Kind::kIdentifier && s[i] == '\\';
      out.push_back(t);
    }
    for (; i < span.end; ++i)
      if (s[i] == '\n') ++line;
  }
  return out;
}

namespace {

// A copy of `s` with one blank, and the line breaks, in place of every region `region_end`
// marks: called at the start of each token with that token, it returns where a region starting
// there ends, or 0 where none starts. Everything else is copied token by token.
template <typename RegionEnd>
std::string BlankRegions(std::string_view s, RegionEnd region_end) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    if (IsSpace(s[i])) {
      out += s[i++];
      continue;
    }
    const Span token = ScanToken(s, i);
    const size_t end = region_end(s, i, token);
    if (end == 0) {
      out.append(s.substr(i, token.end - i));
      i = token.end;
      continue;
    }
    out += ' ';  // it separated tokens
    for (; i < end; ++i)
      if (s[i] == '\n') out += '\n';
  }
  return out;
}

// `(*` opening an attribute instance: the two characters together, and not `(*)`.
bool AttributeStart(std::string_view s, size_t i) {
  if (s[i] != '(' || i + 1 >= s.size() || s[i + 1] != '*') return false;
  size_t k = i + 2;
  while (k < s.size() && IsSpace(s[k])) ++k;
  return k >= s.size() || s[k] != ')';
}

// Just past the `*)` that closes the attribute opened at `i` (strings and comments inside it
// are whole tokens, so a `*)` in them closes nothing); the end of the text if none does.
size_t AttributeEnd(std::string_view s, size_t i) {
  size_t k = i + 2;
  while (k < s.size()) {
    if (IsSpace(s[k])) {
      ++k;
      continue;
    }
    if (s[k] == '*' && k + 1 < s.size() && s[k + 1] == ')') return k + 2;
    k = ScanToken(s, k).end;
  }
  return s.size();
}

}  // namespace

std::string StripComments(std::string_view s) {
  return BlankRegions(s, [](std::string_view, size_t, const Span& token) -> size_t {
    return token.kind == VerilogToken::Kind::kComment ? token.end : 0;
  });
}

std::string StripAttributes(std::string_view s) {
  return BlankRegions(s, [](std::string_view text, size_t i, const Span&) -> size_t {
    return AttributeStart(text, i) ? AttributeEnd(text, i) : 0;
  });
}

std::string LayoutFreeKey(std::string_view source) {
  using Kind = VerilogToken::Kind;
  std::string key;
  const VerilogToken* previous = nullptr;
  bool directive_on_line = false;  // a directive's arguments end with its line
  for (const VerilogToken& t : TokenizeVerilog(source)) {
    if (previous != nullptr && t.line != previous->line) {
      if (directive_on_line) key += '\n';
      directive_on_line = false;
    }
    directive_on_line = directive_on_line || t.kind == Kind::kDirective;
    // Only punctuation can run together into another token (`-` `-` is `--`, `<` `=` is
    // `<=`), and `'` into a literal: there, whether anything separates two tokens is kept.
    if (previous != nullptr && previous->kind == Kind::kPunct && t.kind == Kind::kPunct) {
      const bool touching = previous->text.data() + previous->text.size() == t.text.data();
      key += touching ? '\0' : ' ';
    }
    const auto apostrophe = [](const VerilogToken& x) {
      return x.kind == Kind::kPunct && x.text == "'";
    };
    if (previous != nullptr && (apostrophe(*previous) || apostrophe(t))) {
      const bool touching = previous->text.data() + previous->text.size() == t.text.data();
      key += touching ? '\0' : ' ';
    }
    key += static_cast<char>('a' + static_cast<int>(t.kind));
    if (t.escaped) key += '\\';
    key += std::to_string(t.text.size()) + ":" + std::string(t.text);
    previous = &t;
  }
  return key;
}

}  // namespace evald
