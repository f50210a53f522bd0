// Verdict categories. The letters of verilog-eval's analysis (sv-iv-analyze) keep their
// meaning; evald adds letters for what the benchmark cannot see. docs/verdicts.md lists them.
#pragma once

#include <string>
#include <string_view>

namespace evald {

namespace category {
inline constexpr char kPass = '.';
// verilog-eval's letters
inline constexpr char kSyntax = 'S';
inline constexpr char kExplicitCast = 'e';
inline constexpr char kZeroSizeConstant = '0';
inline constexpr char kNoSensitivities = 'n';
inline constexpr char kDeclaredAsWire = 'w';
inline constexpr char kUnknownModule = 'm';
inline constexpr char kClockBind = 'c';
inline constexpr char kTimeout = 'T';
inline constexpr char kPortBind = 'p';
inline constexpr char kCompileOther = 'C';
inline constexpr char kResetMismatch = 'r';
inline constexpr char kRuntimeMismatch = 'R';
// evald's letters
inline constexpr char kIntegrity = 'I';      // reaches outside the design or forges the result
inline constexpr char kResourceLimit = 'L';  // memory, output, file-size or process limit
inline constexpr char kUngradable = 'X';     // the reference itself fails under this simulator
inline constexpr char kInternalError = '!';  // evald could not run the sample (not its fault)
}  // namespace category

// One-line description of a category letter.
std::string_view CategoryDescription(char letter);

// sv-iv-analyze's scan of a compile+simulation log: first matching line wins, then p, then C,
// then "." if any line is exactly "Mismatches: 0 in N samples", else '?' (undecided).
char BenchmarkLogCategory(std::string_view log);

// sv-iv-analyze's runtime split for undecided samples: 'r' if a line of the code mentions
// `posedge reset`, `negedge reset` or `posedge r)`, else 'R'.
char BenchmarkRuntimeCategory(std::string_view code);

// The full benchmark verdict: BenchmarkLogCategory, falling back to BenchmarkRuntimeCategory.
char BenchmarkVerdict(std::string_view log, std::string_view code);

}  // namespace evald
