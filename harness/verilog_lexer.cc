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
}  // namespace

std::vector<VerilogToken> TokenizeVerilog(std::string_view s) {
  std::vector<VerilogToken> out;
  size_t i = 0;
  int line = 1;
  auto advance = [&](size_t to) {
    for (; i < to && i < s.size(); ++i)
      if (s[i] == '\n') ++line;
  };
  while (i < s.size()) {
    char c = s[i];
    if (IsSpace(c)) {
      advance(i + 1);
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      size_t end = s.find('\n', i);
      advance(end == std::string_view::npos ? s.size() : end);
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t end = s.find("*/", i + 2);
      advance(end == std::string_view::npos ? s.size() : end + 2);
      continue;
    }
    int start_line = line;
    if (c == '"') {
      size_t j = i + 1;
      while (j < s.size() && s[j] != '"') j += (s[j] == '\\' && j + 1 < s.size()) ? 2 : 1;
      out.push_back({VerilogToken::Kind::kString, s.substr(i + 1, j - i - 1), start_line});
      advance(j + 1);
      continue;
    }
    if (c == '\\') {  // escaped identifier: up to white space
      size_t j = i + 1;
      while (j < s.size() && !IsSpace(s[j])) ++j;
      out.push_back({VerilogToken::Kind::kIdentifier, s.substr(i + 1, j - i - 1), start_line});
      advance(j);
      continue;
    }
    if (c == '$' || c == '`' || IsIdentStart(c)) {
      size_t j = i + 1;
      while (j < s.size() && IsIdentChar(s[j])) ++j;
      auto kind = c == '$'   ? VerilogToken::Kind::kSystemName
                  : c == '`' ? VerilogToken::Kind::kDirective
                             : VerilogToken::Kind::kIdentifier;
      size_t from = c == '`' ? i + 1 : i;
      out.push_back({kind, s.substr(from, j - from), start_line});
      advance(j);
      continue;
    }
    if (c >= '0' && c <= '9') {
      size_t j = i + 1;
      while (j < s.size() && (IsIdentChar(s[j]) || s[j] == '\'')) ++j;
      out.push_back({VerilogToken::Kind::kNumber, s.substr(i, j - i), start_line});
      advance(j);
      continue;
    }
    out.push_back({VerilogToken::Kind::kPunct, s.substr(i, 1), start_line});
    advance(i + 1);
  }
  return out;
}

}  // namespace evald
