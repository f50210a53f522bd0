// A design's tokens read by position: the predicates every walker over them shares
// (procedural_regions, formal_fidelity). Any index may lie past the end; nothing matches there.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "harness/verilog_lexer.h"

namespace evald {

class TokenView {
 public:
  explicit TokenView(const std::vector<VerilogToken>& tokens) : t_(tokens), n_(tokens.size()) {}

  // An identifier (escaped or not).
  bool Word(size_t i) const { return i < n_ && t_[i].kind == VerilogToken::Kind::kIdentifier; }
  // A keyword of the language (an escaped name never is one).
  bool Keyword(size_t i) const;
  // The keyword `keyword`.
  bool Is(size_t i, std::string_view keyword) const {
    return Word(i) && !t_[i].escaped && t_[i].text == keyword;
  }
  bool IsAny(size_t i, std::initializer_list<std::string_view> keywords) const {
    for (auto k : keywords)
      if (Is(i, k)) return true;
    return false;
  }
  bool Punct(size_t i, char c) const {
    return i < n_ && t_[i].kind == VerilogToken::Kind::kPunct && t_[i].text[0] == c;
  }
  bool Opens(size_t i) const { return Punct(i, '(') || Punct(i, '[') || Punct(i, '{'); }
  bool Closes(size_t i) const { return Punct(i, ')') || Punct(i, ']') || Punct(i, '}'); }
  // Tokens i and i + 1 written together, like the two halves of `->` or `<=`.
  bool Adjacent(size_t i) const {
    return i + 1 < n_ && t_[i].text.data() + t_[i].text.size() == t_[i + 1].text.data();
  }
  // Token i's line; past the end, the last token's.
  int Line(size_t i) const { return i < n_ ? t_[i].line : (n_ ? t_[n_ - 1].line : 0); }

 protected:
  const std::vector<VerilogToken>& t_;
  const size_t n_;
};

}  // namespace evald
