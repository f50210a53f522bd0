#include "harness/testbench_hardening.h"

#include <gtest/gtest.h>

#include "harness/design_isolation.h"
#include "harness/judge_renaming.h"

namespace evald {
namespace {

const char* kBench =
    "`timescale 1 ps/1 ps\n`define OK 12\n"
    "module stimulus_gen(input clk, output reg [511:0] wavedrom_title); endmodule\n"
    "module tb();\n  typedef struct packed { int errors; int clocks; } stats;\n"
    "  stats stats1;\n  reg clk = 0;\n  logic x_ref, x_dut;\n  wire [511:0] wavedrom_title;\n"
    "  stimulus_gen stim1(.clk, .*);\n  RefModule good1(.clk, .x(x_ref));\n"
    "  TopModule top_module1(.clk, .x(x_dut));\n  wire tb_match; // stats1 tb in a comment\n"
    "  task wait_for_end; @(clk); endtask\n"
    "  initial $dumpvars(1, stim1.clk);\n"
    "  final $display(\"Mismatches: %1d in %1d samples\", stats1.errors, stats1.clocks);\n"
    "  initial begin #1000000 $display(\"TIMEOUT\"); $finish(); end\nendmodule\n";
const char* kRef = "module RefModule(input clk, output x); assign x = clk; endmodule";

TEST(Hardening, EveryNameOfTheJudgeCarriesTheNonce) {
  auto h = HardenTestbench(kBench, kRef, "abc123");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->top, "tb_abc123");
  const std::string& tb = h->testbench;
  EXPECT_NE(tb.find("module tb_abc123()"), std::string::npos) << tb;
  EXPECT_NE(tb.find("module stimulus_gen_abc123"), std::string::npos);
  EXPECT_NE(tb.find("stats_abc123 stats1_abc123;"), std::string::npos);
  EXPECT_NE(tb.find("int errors_abc123;"), std::string::npos);  // struct members too
  EXPECT_NE(tb.find("task wait_for_end_abc123;"), std::string::npos);
  EXPECT_NE(tb.find("wire tb_match_abc123;"), std::string::npos);
  EXPECT_NE(tb.find("output reg [511:0] wavedrom_title_abc123"), std::string::npos);
  // The interface's port names stay (the design's ports are matched by name), so do macro names
  // and the arguments of `timescale.
  EXPECT_NE(tb.find("reg clk = 0;"), std::string::npos);
  EXPECT_NE(tb.find("stim1_abc123(.clk, .*)"), std::string::npos);
  EXPECT_NE(tb.find("$dumpvars(1, stim1_abc123.clk)"), std::string::npos);
  EXPECT_NE(tb.find("`define OK 12"), std::string::npos);
  EXPECT_NE(tb.find("`timescale 1 ps/1 ps"), std::string::npos);
  EXPECT_NE(tb.find("// stats1 tb in a comment"), std::string::npos);  // comments untouched
  // The testbench instantiates the isolation wrappers, not the design and the reference.
  EXPECT_NE(tb.find("evald_ref_abc123 good1_abc123(.clk, .x(x_ref_abc123));"), std::string::npos);
  EXPECT_NE(tb.find("evald_dut_abc123 top_module1_abc123(.clk, .x(x_dut_abc123));"),
            std::string::npos);
  EXPECT_EQ(tb.rfind("`resetall\n`default_nettype none\n", 0), 0u);
}

TEST(Hardening, ResultLinesGoToStandardErrorTaggedFromTheCommandLine) {
  auto h = HardenTestbench(kBench, kRef, "n1");
  ASSERT_TRUE(h.ok());
  const std::string& tb = h->testbench;
  EXPECT_NE(tb.find("$fdisplay(32'h8000_0002, \"[evald-%0s] Mismatches: %1d in %1d samples\", "
                    "evald_tag_n1, stats1_n1.errors_n1, stats1_n1.clocks_n1)"),
            std::string::npos)
      << tb;
  EXPECT_NE(tb.find("$fdisplay(32'h8000_0002, \"[evald-%0s] TIMEOUT\", evald_tag_n1)"),
            std::string::npos);
  EXPECT_NE(tb.find("$value$plusargs(\"evald_tag=%s\", evald_tag_n1)"), std::string::npos);
  EXPECT_EQ(tb.find("$display(\"Mismatches"), std::string::npos);
  EXPECT_EQ(ResultTag("5ec2e7"), "[evald-5ec2e7]");
  EXPECT_EQ(ResultTagPlusarg("5ec2e7"), "+evald_tag=5ec2e7");
}

TEST(Hardening, TheReferenceIsRenamedAndBothAreWrapped) {
  auto h = HardenTestbench(kBench, kRef, "n1");
  ASSERT_TRUE(h.ok());
  const std::string& ref = h->reference;
  EXPECT_NE(ref.find("module RefModule_n1(input clk, output x); assign x = clk; endmodule"),
            std::string::npos)
      << ref;
  EXPECT_NE(ref.find("module evald_ref_n1"), std::string::npos);
  EXPECT_NE(ref.find("RefModule_n1 reference_n1 (.clk(c_n1_clk), .x(c_n1_x));"), std::string::npos);
  EXPECT_NE(ref.find("assign s_n1_clk = clk;\n  assign c_n1_clk = s_n1_clk;"), std::string::npos);
  EXPECT_NE(ref.find("module evald_dut_n1"), std::string::npos);
  EXPECT_NE(ref.find("TopModule design_n1 (.clk(c_n1_clk), .x(c_n1_x));"), std::string::npos);
  // The design's copy of each input comes from the reference's shared one.
  EXPECT_NE(ref.find("assign c_n1_clk = good1_n1.s_n1_clk;"), std::string::npos) << ref;
  ASSERT_EQ(h->interface.ports.size(), 2u);
  EXPECT_EQ(h->interface.ports[0].name, "clk");
}

TEST(Hardening, RequiresAResultLineAReferenceAndATbModule) {
  EXPECT_FALSE(HardenTestbench("module tb(); endmodule", kRef, "n").ok());
  // The reference and the design must be driven by the same inputs (they share the copies).
  std::string apart = kBench;
  apart.replace(apart.find("TopModule top_module1(.clk,"), 27,
                "TopModule top_module1(.clk(x_ref),");
  auto refused = HardenTestbench(apart, kRef, "n");
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("input clk"), std::string::npos)
      << refused.status().ToString();
  EXPECT_FALSE(HardenTestbench(kBench, "module Other(); endmodule", "n").ok());
  EXPECT_FALSE(
      HardenTestbench("module top(); initial $display(\"Mismatches: 0 in 1 samples\"); endmodule",
                      kRef, "n")
          .ok());
}

TEST(Hardening, ReferenceAsDesign) {
  EXPECT_EQ(ReferenceAsDesign("module RefModule (\n); // RefModuleX\nendmodule"),
            "module TopModule (\n); // RefModuleX\nendmodule");
}

TEST(Hardening, StopsAtTheFirstMismatchOnlyWhenAskedAndWhereTheCounterIsFound) {
  const std::string bench = std::string(kBench).replace(
      std::string(kBench).find("  wire tb_match;"), 0,
      "  always @(posedge clk) if (!tb_match) begin stats1.errors++; end\n");
  auto off = HardenTestbench(bench, kRef, "n1");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->stops_at_first_mismatch);
  EXPECT_EQ(off->testbench.find("$finish;"), std::string::npos);
  auto on = HardenTestbench(bench, kRef, "n1", true);
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(on->stops_at_first_mismatch);
  EXPECT_NE(on->testbench.find("stats1_n1.errors_n1++; $finish;"), std::string::npos);
  // No counting statement (or more than one): the testbench runs to its end.
  auto none = HardenTestbench(kBench, kRef, "n1", true);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->stops_at_first_mismatch);
}

TEST(JudgeRenaming, LeavesKeywordsBuiltinMethodsAndPackageScopesAlone) {
  const std::string out = RenameJudgeNames(
      "module m; string s; int q[$]; initial begin s.len(); q.size(); std::randomize(q); "
      "lbl: begin : blk end c = a ? b : d; end endmodule",
      {}, "N");
  EXPECT_NE(out.find("module m_N; string s_N; int q_N[$];"), std::string::npos) << out;
  EXPECT_NE(out.find("s_N.len(); q_N.size(); std::randomize(q_N);"), std::string::npos) << out;
  EXPECT_NE(out.find("lbl_N: begin : blk_N end c_N = a_N ? b_N : d_N;"), std::string::npos) << out;
  // Literals written in pieces keep their digits; a cast's type is a name.
  const std::string lit = RenameJudgeNames(
      "module m; assign {a, b, c} = {'x, 8'h FF, 'hab}; t'(a); endmodule", {}, "N");
  EXPECT_NE(lit.find("{a_N, b_N, c_N} = {'x, 8'h FF, 'hab}; t_N'(a_N);"), std::string::npos) << lit;
}

TEST(DesignIsolation, CopiesEveryPortOneWay) {
  ModuleInterface i;
  i.ports = {{"clk", PortDeclaration::Direction::kInput, 1},
             {"in", PortDeclaration::Direction::kInput, 8},
             {"out", PortDeclaration::Direction::kOutput, 8}};
  auto ref = IsolationWrapper(i, {"wrap_ref", "Ref", "r", "N", "", {}});
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(
      *ref,
      "module wrap_ref (\n  input wire clk,\n  input wire [7:0] in,\n  output wire [7:0] out\n"
      ");\n  wire c_N_clk;\n  wire s_N_clk;\n  assign s_N_clk = clk;\n  assign c_N_clk = s_N_clk;\n"
      "  wire [7:0] c_N_in;\n  wire [7:0] s_N_in;\n  assign s_N_in = in;\n"
      "  assign c_N_in = s_N_in;\n  wire [7:0] c_N_out;\n  assign out = c_N_out;\n"
      "  Ref r (.clk(c_N_clk), .in(c_N_in), .out(c_N_out));\nendmodule\n");
  auto dut = IsolationWrapper(i, {"wrap_dut", "TopModule", "d", "N", "ref1", {}});
  ASSERT_TRUE(dut.ok());
  EXPECT_NE(dut->find("  wire [7:0] c_N_in;\n  assign c_N_in = ref1.s_N_in;\n"), std::string::npos)
      << *dut;
  EXPECT_NE(dut->find("TopModule d (.clk(c_N_clk), .in(c_N_in), .out(c_N_out));"),
            std::string::npos);
  i.ports[1].direction = PortDeclaration::Direction::kInout;
  EXPECT_FALSE(IsolationWrapper(i, {"wrap", "TopModule", "d", "N", "", {}}).ok());
  i.ports[1].direction = PortDeclaration::Direction::kInput;
  i.ports[1].width.reset();
  EXPECT_FALSE(IsolationWrapper(i, {"wrap", "TopModule", "d", "N", "", {}}).ok());
}

// A self-checking testbench that sets the design's header parameters sets them on the wrapper,
// which declares the reference's (defaults as written) and hands on the ones set.
TEST(DesignIsolation, HandsOnTheParametersTheTestbenchSets) {
  InterfaceReading r = ReadModuleInterface(
      "module m #(parameter W = 8, parameter D = $clog2(W) + 1) (input [W-1:0] a, output y);\n"
      "endmodule\n",
      "m");
  ASSERT_EQ(r.outcome, InterfaceReading::Outcome::kFound);
  ASSERT_EQ(r.interface.parameters.size(), 2u);
  EXPECT_EQ(r.interface.parameters[0].name, "W");
  EXPECT_EQ(r.interface.parameters[0].default_value, "8");
  EXPECT_EQ(r.interface.parameters[1].default_value, "$clog2(W) + 1");
  auto wrapper = IsolationWrapper(r.interface, {"wrap", "m", "d", "N", "", {"W"}});
  ASSERT_TRUE(wrapper.ok()) << wrapper.status().ToString();
  EXPECT_NE(wrapper->find("module wrap #(parameter W = 8, parameter D = $clog2(W) + 1) ("),
            std::string::npos)
      << *wrapper;
  EXPECT_NE(wrapper->find("  m #(.W(W)) d (.a(c_N_a), .y(c_N_y));"), std::string::npos) << *wrapper;
  // Nothing set: the wrapper has no parameters (verilog-eval's shape, unchanged).
  auto plain = IsolationWrapper(r.interface, {"wrap", "m", "d", "N", "", {}});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->find("#("), std::string::npos) << *plain;
}

}  // namespace
}  // namespace evald
