// The grader checks exactly the text it compiles. Two properties, checked against the real
// preprocessors (iverilog -E, verilator -E -P) on texts a fuzzer or a generator supplies:
//  1. What the check accepts is final: preprocessing the compiled text again, with either
//     simulator's preprocessor, gives the same tokens (nothing is left to expand, no comment
//     or string is read another way) - or is refused, as the compiler then refuses it.
//  2. Where the text has no directive at all, the lexer's view (comments removed) equals the
//     token view of each preprocessor's output: they agree on where every comment, string and
//     escaped name begins and ends.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

namespace evald::fuzz {

struct DifferentialResult {
  bool mismatch = false;
  std::string what;  // the property that failed, with both views
  int accepted = 0;  // how many preprocessor outputs the compiled-text check accepted
};

DifferentialResult CompareWithPreprocessors(std::string_view text);

// A random text of Verilog fragments chosen to stress lexing: strings with escapes and comment
// markers, comments with quotes, escaped names, directives, macros with pasting and strings.
std::string RandomPreprocessorText(std::mt19937& rng);

// libFuzzer entry: traps on a mismatch.
int PreprocessorDifferential(const uint8_t* data, size_t size);

}  // namespace evald::fuzz
