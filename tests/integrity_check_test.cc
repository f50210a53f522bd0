#include "harness/integrity_check.h"

#include <gtest/gtest.h>

namespace evald {
namespace {

bool Violates(const std::string& code) {
  return CheckDesignIntegrity(code).violation;
}

TEST(Integrity, OrdinaryDesignsPass) {
  EXPECT_FALSE(Violates("module TopModule(input a, output b);\n assign b = a;\nendmodule\n"));
  EXPECT_FALSE(
      Violates("module TopModule(input clk); typedef struct packed {logic x;} s_t; s_t tb;\n"
               " always @(posedge clk) tb.x <= 1; endmodule"));  // its own `tb`
  EXPECT_FALSE(
      Violates("// RefModule in a comment\n/* tb.stats1 */ module TopModule(); "
               "initial $display(\"RefModule tb.x\"); endmodule"));
  EXPECT_FALSE(Violates("`ifdef FOO\n`else\n`endif\n`define W 8\nmodule TopModule(); endmodule"));
  EXPECT_FALSE(Violates("module TopModule(input [3:0] a); sub u(.x(a)); endmodule"));
}

TEST(Integrity, ReachingOutsideIsAViolation) {
  EXPECT_TRUE(
      Violates("module TopModule(input a, output b); RefModule r(.a(a), .b(b)); endmodule"));
  EXPECT_TRUE(Violates("module TopModule(); initial force tb.stats1.errors = 0; endmodule"));
  EXPECT_TRUE(Violates("module TopModule(); always @* stats1.errors = 0; endmodule"));
  EXPECT_TRUE(Violates("module TopModule(output o); assign o = good1.out; endmodule"));
  EXPECT_TRUE(Violates("module TopModule(); initial $root.tb.stats1.errors = 0; endmodule"));
  EXPECT_TRUE(Violates("module TopModule(); initial \\tb .stats1.errors = 0; endmodule"));
  EXPECT_TRUE(Violates("`include \"/etc/passwd\"\nmodule TopModule(); endmodule"));
  EXPECT_TRUE(Violates("module TopModule(); initial $system(\"id\"); endmodule"));
  EXPECT_TRUE(Violates("module TopModule(); initial $c(\"system(0);\"); endmodule"));
  EXPECT_TRUE(Violates(
      "module TopModule(); import \"DPI-C\" function int system(input string s); endmodule"));
  EXPECT_TRUE(
      Violates("`systemc_imp_header\n#include <cstdlib>\n`verilog\nmodule TopModule(); endmodule"));
  EXPECT_TRUE(Violates("module TopModule(); endmodule\n`ifdef NEVER\n"));
  EXPECT_TRUE(Violates("bind tb checker c(); module TopModule(); endmodule"));
}

TEST(Integrity, ReasonNamesTheLine) {
  auto f = CheckDesignIntegrity("module TopModule();\n\n  RefModule r();\nendmodule");
  ASSERT_TRUE(f.violation);
  EXPECT_NE(f.reason.find("line 3"), std::string::npos) << f.reason;
}

}  // namespace
}  // namespace evald
