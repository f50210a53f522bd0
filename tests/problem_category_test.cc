#include "datasets/problem_category.h"

#include <gtest/gtest.h>

namespace evald {
namespace {

Problem Make(const std::string& name, const std::string& reference) {
  Problem p;
  p.name = name;
  p.reference = reference;
  return p;
}

TEST(ProblemCategory, RulesInOrder) {
  EXPECT_EQ(ProblemCategory(Make("Prob100_fsm3comb", "assign next = a & b;")), "fsm");
  EXPECT_EQ(ProblemCategory(Make("P_lemmings1", "")), "fsm");
  EXPECT_EQ(ProblemCategory(Make(
                "P_seq", "always @(posedge clk) state <= next;\nalways @(*) case (state) endcase")),
            "fsm");
  EXPECT_EQ(ProblemCategory(Make("P_dff", "always @(posedge clk) q <= d + 1;")), "sequential");
  EXPECT_EQ(ProblemCategory(Make("P_add", "assign {cout, sum} = a + b + cin;")), "arithmetic");
  // Sensitivity lists, for-loop headers, bit selects and comments are not arithmetic.
  EXPECT_EQ(ProblemCategory(Make("P_mux",
                                 "always @(*) begin for (i = 0; i < 8; i = i + 1) "
                                 "out[i] = in[7-i]; end // a - b\nalways @* x = y;")),
            "combinational");
}

}  // namespace
}  // namespace evald
