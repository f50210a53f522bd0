#include "harness/testbench_hardening.h"

#include <gtest/gtest.h>

namespace evald {
namespace {

const char* kBench =
    "module stimulus_gen(input clk); endmodule\n"
    "module tb();\n  stats stats1;\n  stimulus_gen stim1(.clk);\n  RefModule good1(.x(x_ref));\n"
    "  TopModule top_module1(.x(x_dut));\n  wire tb_match;\n"
    "  final $display(\"Mismatches: %1d in %1d samples\", stats1.errors, stats1.clocks);\n"
    "  initial begin #1000000 $display(\"TIMEOUT\"); $finish(); end\nendmodule\n";

TEST(Hardening, RenamesScopesAndTagsResultLines) {
  auto h = HardenTestbench(kBench, "module RefModule(output x); endmodule", "abc123", "5ec2e7");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->top, "tb_abc123");
  EXPECT_EQ(h->tag, "[evald-5ec2e7]");
  EXPECT_EQ(h->top.find("5ec2e7"), std::string::npos);  // names carry the nonce, never the secret
  const std::string& tb = h->testbench;
  EXPECT_NE(tb.find("module tb_abc123()"), std::string::npos);
  EXPECT_NE(tb.find("stats stats1_abc123;"), std::string::npos);
  EXPECT_NE(tb.find("RefModule_abc123 good1_abc123"), std::string::npos);
  EXPECT_NE(tb.find("TopModule top_module1_abc123"),
            std::string::npos);                             // the design keeps its name
  EXPECT_NE(tb.find("wire tb_match;"), std::string::npos);  // whole words only
  EXPECT_NE(tb.find("\"[evald-5ec2e7] Mismatches: %1d"), std::string::npos);
  EXPECT_NE(tb.find("$display(\"[evald-5ec2e7] TIMEOUT\")"), std::string::npos);
  EXPECT_EQ(h->reference, "module RefModule_abc123(output x); endmodule");
}

TEST(Hardening, RequiresAResultLine) {
  EXPECT_FALSE(HardenTestbench("module tb(); endmodule", "", "n", "s").ok());
}

TEST(Hardening, ReferenceAsDesign) {
  EXPECT_EQ(ReferenceAsDesign("module RefModule (\n); // RefModuleX\nendmodule"),
            "module TopModule (\n); // RefModuleX\nendmodule");
}

TEST(Hardening, StopsAtTheFirstMismatchOnlyWhenAskedAndWhereTheCounterIsFound) {
  const std::string bench = std::string(kBench).replace(
      std::string(kBench).find("  wire tb_match;"), 0,
      "  always @(posedge clk) if (!tb_match) begin stats1.errors++; end\n");
  auto off = HardenTestbench(bench, "module RefModule(); endmodule", "n1", "s1");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->stops_at_first_mismatch);
  EXPECT_EQ(off->testbench.find("$finish;"), std::string::npos);
  auto on = HardenTestbench(bench, "module RefModule(); endmodule", "n1", "s1", true);
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(on->stops_at_first_mismatch);
  EXPECT_NE(on->testbench.find("stats1_n1.errors++; $finish;"), std::string::npos);
  // No counting statement (or more than one): the testbench runs to its end.
  auto none = HardenTestbench(kBench, "module RefModule(); endmodule", "n1", "s1", true);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->stops_at_first_mismatch);
}

}  // namespace
}  // namespace evald
