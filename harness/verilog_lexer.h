// A small Verilog/SystemVerilog tokenizer: enough to look at a design's identifiers, system
// tasks, directives and strings without being fooled by comments, strings or escaped names.
// It never fails; unknown bytes become punctuation tokens. Tokens are views into the source (no
// copies): memory is one small token per source byte at worst, so callers bound the source
// (kMaxLexedBytes) before lexing.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace evald {

struct VerilogToken {
  enum class Kind { kIdentifier, kSystemName, kDirective, kString, kNumber, kPunct };
  Kind kind;
  std::string_view text;  // escaped identifiers: without the backslash; directives: without the
                          // backtick; strings: the body between the quotes, escapes as written
  int line;
};

// The largest text the grader lexes (a design, or a design after preprocessing): 2 MiB, some
// 100x the longest real completion; above it a design is refused before any work is done.
inline constexpr size_t kMaxLexedBytes = 2u << 20;

std::vector<VerilogToken> TokenizeVerilog(std::string_view source);

}  // namespace evald
