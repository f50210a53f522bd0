// A small Verilog/SystemVerilog tokenizer: enough to look at a design's identifiers, system
// tasks, directives and strings without being fooled by comments, strings or escaped names.
// It follows the simulators' own rules where they matter for what is hidden from view: a string
// ends at its closing quote or at the end of its line (both simulators refuse a string that
// runs on), an escaped identifier at white space, a line comment at the end of the line.
// It never fails; unknown bytes become punctuation tokens. Tokens are views into the source (no
// copies): memory is one small token per source byte at worst, so callers bound the source
// (kMaxLexedBytes) before lexing.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace evald {

struct VerilogToken {
  enum class Kind { kIdentifier, kSystemName, kDirective, kString, kNumber, kPunct, kComment };
  Kind kind;
  std::string_view text;  // escaped identifiers: without the backslash; directives: without the
                          // backtick; strings: the body between the quotes, escapes as written;
                          // comments: the whole comment, delimiters included
  int line;
  bool escaped = false;  // an escaped identifier (\name): never a keyword
};

// The largest text the grader lexes (a design, or a design after preprocessing): 2 MiB, some
// 100x the longest real completion; above it a design is refused before any work is done.
inline constexpr size_t kMaxLexedBytes = 2u << 20;

// Comments are left out unless `keep_comments`.
std::vector<VerilogToken> TokenizeVerilog(std::string_view source, bool keep_comments = false);

// The source with every comment replaced by blanks, its line breaks kept (so that line numbers
// stay those of the source). What the grader compiles is this text: whatever the lexer took for
// a comment is gone for the compiler too, so the two cannot disagree about what is code.
std::string StripComments(std::string_view source);

// The source with every attribute instance `(* ... *)` replaced by a blank, its line breaks
// kept; `@(*)` is an event control, not an attribute, and stays. Simulators give attributes no
// meaning, Yosys honours many (full_case, parallel_case, init, blackbox, keep, ...): what Yosys
// reads of a design is this text, so that it judges the design the simulator runs.
std::string StripAttributes(std::string_view source);

// The source as its tokens, each with its kind, and nothing else but what decides how tokens
// read: whether two punctuation tokens (or an apostrophe and its neighbour) touch, and the line
// breaks after directives (whose arguments end with the line). Two texts with the same key are
// the same program to any tool that reads tokens — comments, blank lines, indentation and
// spacing aside — while `a--b` and `a - -b` stay apart. What formal results are shared by
// (cross_check_runner.h).
std::string LayoutFreeKey(std::string_view source);

}  // namespace evald
