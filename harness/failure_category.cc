#include "harness/failure_category.h"

#include "base/py_text.h"
#include "harness/result_line.h"

namespace evald {

std::string_view CategoryDescription(char letter) {
  switch (letter) {
    case '.':
      return "pass";
    case 'S':
      return "syntax error";
    case 'e':
      return "explicit cast required";
    case '0':
      return "sized constant of size zero";
    case 'n':
      return "always block with no sensitivities";
    case 'w':
      return "declared as wire";
    case 'm':
      return "unknown module type";
    case 'c':
      return "unable to bind clk";
    case 'T':
      return "timeout";
    case 'p':
      return "unable to bind wire/reg";
    case 'C':
      return "other compile error";
    case 'r':
      return "runtime mismatch (design uses an asynchronous reset)";
    case 'R':
      return "runtime mismatch";
    case 'I':
      return "integrity violation (reaches outside the design or forges the result)";
    case 'L':
      return "sandbox resource limit (memory, output, file size, processes)";
    case 'X':
      return "problem ungradable with this simulator (the reference fails)";
    case '!':
      return "internal error (the sample could not be run)";
    default:
      return "unknown";
  }
}

char BenchmarkLogCategory(std::string_view log) {
  bool error_c = false, error_p = false, no_mismatch = false;
  for (auto line : py::SplitFileLines(log)) {
    auto has = [&](std::string_view needle) { return line.find(needle) != std::string_view::npos; };
    if (has("syntax error")) return 'S';
    if (has("error")) error_c = true;
    if (has("error: This assignment requires an explicit cast")) return 'e';
    if (has("error: Sized numeric constant must have a size greater than zero")) return '0';
    if (has("warning: always_comb process has no sensitivities")) return 'n';
    if (has("found no sensitivities so it will never trigger")) return 'n';
    if (has("is declared here as wire")) return 'w';
    if (has("Unknown module type")) return 'm';
    if (has("Unable to bind wire/reg")) error_p = true;
    if (has("Unable to bind wire/reg/memory `clk'")) return 'c';
    if (has("TIMEOUT")) return 'T';
    if (auto r = MatchResultLine(line); r && r->zero_mismatches) no_mismatch = true;
  }
  if (error_p) return 'p';
  if (error_c) return 'C';
  if (no_mismatch) return '.';
  return '?';
}

char BenchmarkRuntimeCategory(std::string_view code) {
  for (auto line : py::SplitFileLines(code)) {
    if (line.find("posedge reset") != std::string_view::npos ||
        line.find("negedge reset") != std::string_view::npos ||
        line.find("posedge r)") != std::string_view::npos)
      return 'r';
  }
  return 'R';
}

char BenchmarkVerdict(std::string_view log, std::string_view code) {
  char c = BenchmarkLogCategory(log);
  return c == '?' ? BenchmarkRuntimeCategory(code) : c;
}

}  // namespace evald
