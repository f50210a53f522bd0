#include "datasets/problem_category.h"

#include <cctype>
#include <string>
#include <vector>

namespace evald {

namespace {

bool IdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$';
}

// Identifiers and single symbols of Verilog text, comments dropped; one linear pass.
std::vector<std::string> Tokens(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 2;
    } else if (IdentChar(c)) {
      size_t j = i;
      while (j < text.size() && IdentChar(text[j])) ++j;
      out.emplace_back(text.substr(i, j - i));
      i = j;
    } else {
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') out.emplace_back(1, c);
      ++i;
    }
  }
  return out;
}

bool NameSays(std::string_view name, std::string_view word) {
  std::string lower(name);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return lower.find(word) != std::string::npos;
}

}  // namespace

std::string_view ProblemCategory(const Problem& problem) {
  const std::vector<std::string> t = Tokens(problem.reference);
  bool clocked = false, case_on_state = false, arithmetic = false;
  int bracket = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    // A for loop's header counts its index (i = i + 1), not the design's arithmetic.
    if (t[i] == "for" && i + 1 < t.size() && t[i + 1] == "(") {
      int depth = 0;
      for (++i; i < t.size(); ++i) {
        depth += t[i] == "(" ? 1 : t[i] == ")" ? -1 : 0;
        if (depth == 0) break;
      }
      continue;
    }
    if (t[i] == "posedge" || t[i] == "negedge") clocked = true;
    if (t[i] == "case" && i + 2 < t.size() && t[i + 1] == "(" &&
        (t[i + 2] == "state" || t[i + 2] == "cs" || t[i + 2] == "current_state" ||
         t[i + 2] == "present_state"))
      case_on_state = true;
    if (t[i] == "[") ++bracket;
    if (t[i] == "]" && bracket > 0) --bracket;
    // `@*` and `@(*)` are sensitivity lists, not products.
    const bool star_list = t[i] == "*" && i > 0 &&
                           (t[i - 1] == "@" || (t[i - 1] == "(" && i + 1 < t.size() &&
                                                t[i + 1] == ")" && i > 1 && t[i - 2] == "@"));
    if (bracket == 0 && (t[i] == "+" || t[i] == "-" || (t[i] == "*" && !star_list)))
      arithmetic = true;
  }
  if (NameSays(problem.name, "fsm") || NameSays(problem.name, "lemmings") ||
      (clocked && case_on_state))
    return "fsm";
  if (clocked) return "sequential";
  if (arithmetic) return "arithmetic";
  return "combinational";
}

}  // namespace evald
