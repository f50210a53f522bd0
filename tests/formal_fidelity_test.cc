// The allow-list of constructs formal reads as the simulator runs them (formal_fidelity.h):
// what Yosys would read differently is refused with its line, what both read alike is not, and
// every verilog-eval reference, in both tasks, is inside it.
#include "harness/formal_fidelity.h"

#include <gtest/gtest.h>

#include "datasets/dataset.h"
#include "harness/procedural_regions.h"
#include "harness/testbench_hardening.h"
#include "harness/verilog_lexer.h"
#include "test_support.h"

namespace evald {
namespace {

std::string Module(const std::string& body) {
  return "module TopModule #(parameter W = 8) (input clk, input reset, input sel, input [7:0] a,\n"
         "    input [7:0] b, output logic [7:0] out);\n" +
         body + "endmodule\n";
}

void ExpectFaithful(const std::string& body) {
  FidelityFinding f = CheckFormalFidelity(Module(body));
  EXPECT_TRUE(f.faithful) << body << "\n" << f.reason;
}

void ExpectRefused(const std::string& body, const std::string& words) {
  FidelityFinding f = CheckFormalFidelity(Module(body));
  EXPECT_FALSE(f.faithful) << body;
  EXPECT_NE(f.reason.find(words), std::string::npos) << f.reason;
  EXPECT_EQ(f.reason.rfind("line ", 0), 0u) << f.reason;
}

TEST(FormalFidelity, WhatBothReadAlikeIsJudged) {
  ExpectFaithful("  assign out = sel ? b : a;\n");
  ExpectFaithful("  always @* out = sel ? b : a;\n");
  ExpectFaithful("  always @(*) begin out = a; if (sel) out = b; end\n");
  ExpectFaithful("  always_comb out = sel ? b : a;\n");
  ExpectFaithful("  always @(sel or a or b) out = sel ? b : a;\n");
  ExpectFaithful("  always @(sel, a, b) begin : pick out = a; if (sel) out = b; end\n");
  ExpectFaithful("  always @(posedge clk) if (reset) out <= 0; else out <= out + 1;\n");
  ExpectFaithful("  always @(posedge clk or posedge reset) if (reset) out <= 0; else out <= a;\n");
  ExpectFaithful("  always_ff @(posedge clk) out <= a;\n");
  ExpectFaithful(
      "  localparam [7:0] ZERO = 8'd0, ONE = 8'd1;\n"
      "  always @(sel or a) begin out = ZERO; if (sel) out = a + ONE; end\n");
  ExpectFaithful(
      "  typedef enum logic [1:0] {IDLE, RUN = 2'd2} state_t;\n  state_t s;\n"
      "  always @(s or a) case (s) IDLE: out = a; default: out = 0; endcase\n");
  ExpectFaithful(
      "  integer i;\n  always @(a) begin out = 0; for (i = 0; i < 8; i++) "
      "out[i] = a[7 - i]; end\n");
  ExpectFaithful(
      "  sub #(.W(W)) u (.x(a), .y(out));\nendmodule\n"
      "module sub #(parameter W = 1) (input [W-1:0] x, output [W-1:0] y);\n"
      "  assign y = x;\n");
  ExpectFaithful("  initial out = 0;\n  always @(posedge clk) out <= a;\n");
}

TEST(FormalFidelity, DelaysAndTimingControlsAreRefused) {
  ExpectRefused("  assign #2 out = a;\n", "delay");
  ExpectRefused("  wire [7:0] #1 w = a;\n  assign out = w;\n", "delay");
  ExpectRefused("  and #(1) g (out[0], a[0], b[0]);\n", "delay");
  ExpectRefused("  always @* begin out = ~a; #1 out = a; end\n", "delay");
  ExpectRefused("  always @(posedge clk) out <= #1 a;\n", "delay");
  ExpectRefused("  always begin out = a; #5; end\n", "without an event control");
  ExpectRefused("  always @(posedge clk) begin @(negedge clk) out <= a; end\n", "event control");
  ExpectRefused("  initial begin out = 0; @(posedge clk) out = a; end\n", "event control");
  ExpectRefused("  always @* begin wait (sel) out = a; end\n", "wait");
  ExpectRefused("  initial fork out = a; join\n", "fork");
  ExpectRefused("  event e;\n  always @(posedge clk) -> e;\n", "event");
  ExpectRefused("  specify (a => out) = 1; endspecify\n", "specify");
}

TEST(FormalFidelity, AnIncompleteEventListIsRefusedNamingWhatIsMissing) {
  ExpectRefused("  always @(sel or a) out = sel ? b : a;\n", "reads `b`");
  ExpectRefused("  always @(a[0] or b or sel) out = sel ? b : a;\n", "reads `a`");
  ExpectRefused("  always @sel out = sel ? b : a;\n", "reads `b`");
  ExpectRefused("  always @(posedge clk or a) out <= a;\n", "edges and levels");
  ExpectRefused("  always_ff @(a) out <= a;\n", "always_ff without edges");
}

TEST(FormalFidelity, ARaceBetweenClockedBlocksIsRefused) {
  ExpectRefused(
      "  logic [7:0] t;\n  always @(posedge clk) t = a;\n  always @(posedge clk) out <= t;\n",
      "`t` is assigned with = in one clocked block and read in another");
  // Read only where it is written, or through combinational logic: no race.
  ExpectFaithful("  logic [7:0] t;\n  always @(posedge clk) begin t = a + b; out <= t; end\n");
  ExpectFaithful("  logic [7:0] t;\n  always @(posedge clk) t = a;\n  assign out = t;\n");
  ExpectFaithful(
      "  logic [7:0] t;\n  always @(posedge clk) t <= a;\n  always @(posedge clk) out <= t;\n");
  // A loop counter each block sets before it reads it.
  ExpectFaithful(
      "  integer i;\n  logic [7:0] r;\n"
      "  always @(posedge clk) for (i = 0; i < 8; i = i + 1) r[i] <= a[i];\n"
      "  always @(posedge clk) for (i = 0; i < 8; i = i + 1) out[i] <= r[7 - i];\n");
}

TEST(FormalFidelity, WhatYosysResolvesDifferentlyIsRefused) {
  ExpectRefused("  assign (weak0, weak1) out = a;\n  assign out = b;\n", "weak0");
  ExpectRefused("  wand [7:0] w;\n  assign w = a;\n  assign w = b;\n  assign out = w;\n", "wand");
  ExpectRefused("  tran t (out[0], a[0]);\n", "tran");
  ExpectRefused("  tri [7:0] t;\n  assign out = t;\n", "tri");
}

TEST(FormalFidelity, DeepNestingIsReportedNotFollowed) {
  std::string deep = "  always @* ";
  for (int i = 0; i < kMaxStatementNesting + 10; ++i) deep += "if (sel) ";
  deep += "out = a;\n";
  FidelityFinding f = CheckFormalFidelity(Module(deep));
  EXPECT_FALSE(f.faithful);
}

// Shapes that would make a walk that rescans quadratic (each of them some 300,000 tokens): the
// test finishes in milliseconds when every token is looked at a bounded number of times.
TEST(FormalFidelity, AdversarialShapesAreReadInOnePass) {
  auto repeat = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  EXPECT_TRUE(CheckFormalFidelity(Module(repeat("  parameter (", 100000))).faithful);
  EXPECT_FALSE(
      CheckFormalFidelity(Module("  initial begin " + repeat("always @( ", 100000))).faithful);
  EXPECT_TRUE(
      CheckFormalFidelity(Module("  always @* out = a" + repeat(".b", 150000) + ";\n")).faithful);
  EXPECT_TRUE(
      CheckFormalFidelity(Module("  always @(a) " + repeat("o.", 150000) + "o = a;\n")).faithful);
}

// A construct refused here only costs a correct design its strict status; refusing the
// benchmark's own references would cost every design of the problem. None is refused.
TEST(FormalFidelity, EveryVerilogEvalReferenceIsJudged) {
  if (!testing::HaveSharedVerilogEval()) GTEST_SKIP() << "no ../shared/verilog-eval";
  for (Task task : {Task::kSpecToRtl, Task::kCodeComplete}) {
    auto ds = Dataset::Load(testing::SharedVerilogEval(), task);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    ASSERT_GT(ds->problems().size(), 150u);
    for (const Problem& p : ds->problems()) {
      FidelityFinding f = CheckFormalFidelity(StripComments(ReferenceAsDesign(p.reference)));
      EXPECT_TRUE(f.faithful) << p.name << ": " << f.reason;
    }
  }
}

}  // namespace
}  // namespace evald
