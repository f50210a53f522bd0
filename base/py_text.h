// Python `str` semantics over UTF-8 text. verilog-eval builds prompts and extracts code with
// Python's splitlines(), strip() and startswith(); reproducing them byte for byte is what keeps
// evald's prompts identical to the benchmark's and its extraction identical on odd responses
// (\r\n, form feeds, U+2028, non-breaking spaces ...). Invalid UTF-8 is treated byte-wise.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace evald::py {

// str.splitlines() without keepends.
std::vector<std::string_view> SplitLines(std::string_view text);

// Lines as Python yields them when iterating a file opened in text mode (universal newlines:
// \n, \r\n and \r end a line), without the line ends.
std::vector<std::string_view> SplitFileLines(std::string_view text);

// The text Python's open() in text mode returns (universal newlines): every "\r\n" and every
// lone "\r" becomes "\n". verilog-eval reads its prompt, interface and example files that way,
// so a checkout with CRLF line endings must give the same prompts.
std::string TranslateNewlines(std::string_view text);

// str.strip() / lstrip() / rstrip() with no arguments (Unicode whitespace).
std::string_view Strip(std::string_view s);
std::string_view LStrip(std::string_view s);
std::string_view RStrip(std::string_view s);

// str.split() with no arguments, for ASCII blanks only (space, tab): fields of a tool's table
// row. Empty fields are never produced.
std::vector<std::string_view> SplitBlanks(std::string_view line);

// "\n".join(lines)
std::string JoinLines(const std::vector<std::string>& lines);

// str.replace(old, new) (all occurrences).
std::string ReplaceAll(std::string_view s, std::string_view from, std::string_view to);

inline bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
inline bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

}  // namespace evald::py
