// The testbench's result line, "Mismatches: N in M samples", recognised without regular
// expressions: the text comes from the simulation of an untrusted design, which may print
// megabytes of digits or spaces, so every scan here is linear in its input and allocates nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace evald {

struct ResultCounts {
  int64_t mismatches = -1;  // -1: more digits than an int64 holds
  int64_t samples = -1;
  bool zero_mismatches = false;  // the mismatch count was literally "0" (the benchmark's test)
};

// The whole line is "Mismatches: N in M samples" (sv-iv-analyze's anchored pattern).
std::optional<ResultCounts> MatchResultLine(std::string_view line);

// "Mismatches:", optional blanks, N, blanks, "in", blanks, M, blanks, "samples" anywhere in the
// line (blanks: space, tab, vertical tab, form feed, carriage return).
std::optional<ResultCounts> FindResultLine(std::string_view line);

}  // namespace evald
