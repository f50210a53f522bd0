#include "harness/failure_category.h"

#include <gtest/gtest.h>

namespace evald {
namespace {

TEST(BenchmarkCategory, CompileMessagesOfIcarus) {
  EXPECT_EQ(BenchmarkLogCategory("d.sv:3: syntax error\nI give up.\n"), 'S');
  EXPECT_EQ(BenchmarkLogCategory("d.sv:5: error: This assignment requires an explicit cast.\n"),
            'e');
  EXPECT_EQ(BenchmarkLogCategory(
                "d.sv:2: error: Sized numeric constant must have a size greater than zero.\n"),
            '0');
  EXPECT_EQ(BenchmarkLogCategory(
                "d.sv:7: warning: @* found no sensitivities so it will never trigger.\n"),
            'n');
  EXPECT_EQ(BenchmarkLogCategory("d.sv:4: error: q is not a valid l-value in tb.top.\n"
                                 "d.sv:2:      : q is declared here as wire.\n"),
            'w');
  EXPECT_EQ(BenchmarkLogCategory("d.sv:9: error: Unknown module type: foo\n"), 'm');
  EXPECT_EQ(
      BenchmarkLogCategory("t.sv:9: error: Unable to bind wire/reg/memory `clk' in `tb.top'\n"),
      'c');
  EXPECT_EQ(BenchmarkLogCategory("t.sv:9: error: Unable to bind wire/reg/memory `x' in `tb.top'\n"),
            'p');
  EXPECT_EQ(BenchmarkLogCategory("t.sv:9: error: something else\n"), 'C');
}

TEST(BenchmarkCategory, FirstMatchingLineWinsThenDeferredOnes) {
  // 'p' is only decided after the scan: a later syntax error still wins.
  EXPECT_EQ(BenchmarkLogCategory("error: Unable to bind wire/reg/memory `x'\nsyntax error\n"), 'S');
  // An "error" line makes a passing log 'C' (the benchmark's known quirk).
  EXPECT_EQ(BenchmarkLogCategory("Mismatches: 0 in 10 samples\nerror while closing\n"), 'C');
  EXPECT_EQ(BenchmarkLogCategory("TIMEOUT\nMismatches: 0 in 10 samples\n"), 'T');
}

TEST(BenchmarkCategory, PassNeedsExactResultLine) {
  EXPECT_EQ(BenchmarkLogCategory("Mismatches: 0 in 219 samples\n"), '.');
  EXPECT_EQ(BenchmarkLogCategory("Mismatches: 0 in 219 samples\r\n"), '.');
  EXPECT_EQ(BenchmarkLogCategory("  Mismatches: 0 in 219 samples\n"), '?');
  EXPECT_EQ(BenchmarkLogCategory("Mismatches: 3 in 219 samples\n"), '?');
  EXPECT_EQ(
      BenchmarkVerdict("Mismatches: 3 in 219 samples\n", "always @(posedge clk, posedge reset)"),
      'r');
  EXPECT_EQ(BenchmarkVerdict("Mismatches: 3 in 219 samples\n", "always @(posedge r)"), 'r');
  EXPECT_EQ(BenchmarkVerdict("Mismatches: 3 in 219 samples\n", "always @(posedge clk)"), 'R');
}

TEST(BenchmarkCategory, EveryLetterIsDocumented) {
  for (char c : std::string(".Se0nwmcTpCrRILX!")) EXPECT_NE(CategoryDescription(c), "unknown") << c;
}

}  // namespace
}  // namespace evald
