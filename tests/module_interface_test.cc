#include "harness/module_interface.h"

#include <gtest/gtest.h>

#include "datasets/dataset.h"
#include "harness/constant_expression.h"
#include "harness/testbench_hardening.h"
#include "harness/verilog_lexer.h"
#include "test_support.h"

namespace evald {
namespace {

using Direction = PortDeclaration::Direction;
using Outcome = InterfaceReading::Outcome;

ModuleInterface Read(const std::string& text) {
  InterfaceReading r = ReadModuleInterface(text, "TopModule");
  EXPECT_EQ(r.outcome, Outcome::kFound) << r.problem << "\n" << text;
  return r.interface;
}

std::string Shape(const ModuleInterface& m) {
  std::string s;
  for (const auto& p : m.ports)
    s += std::string(DirectionName(p.direction)) + " " + p.name + ":" +
         (p.width ? std::to_string(*p.width) : "?") + (p.unpacked ? "[]" : "") + "; ";
  return s;
}

TEST(ModuleInterface, AnsiHeaders) {
  EXPECT_EQ(Shape(Read("module TopModule(input clk, input [7:0] a, b, output reg [3:0] q, "
                       "output logic signed [15:0] s, inout wire w); endmodule")),
            "input clk:1; input a:8; input b:8; output q:4; output s:16; inout w:1; ");
  EXPECT_EQ(Shape(Read("module TopModule #(parameter W = 4, parameter int D = W * 2)"
                       "(input [W-1:0] a, output [D-1:0] y, output int n, output byte c);"
                       " endmodule")),
            "input a:4; output y:8; output n:32; output c:8; ");
  EXPECT_EQ(Shape(Read("module TopModule(input [3:0][7:0] p, input logic [0:5] r, "
                       "output [$clog2(16):0] z, input [8'hF:4'd0] h); endmodule")),
            "input p:32; input r:6; output z:5; input h:16; ");
  EXPECT_EQ(Shape(Read("module TopModule(input a, output [7:0] m [0:3]); endmodule")),
            "input a:1; output m:?[]; ");
  EXPECT_TRUE(Read("module TopModule(); endmodule").ports.empty());
  EXPECT_TRUE(Read("module TopModule; endmodule").ports.empty());
}

TEST(ModuleInterface, TypesAndParametersOfTheBodyAndTheFile) {
  EXPECT_EQ(Shape(Read("typedef enum logic [1:0] {A, B, C} st_t;\n"
                       "typedef logic [5:0] six_t;\n"
                       "module TopModule(input st_t s, output six_t y, output real r); endmodule")),
            "input s:2; output y:6; output r:?; ");
  // A name evald cannot evaluate leaves the width unknown, not guessed.
  EXPECT_EQ(Shape(Read("module TopModule(input [f(3):0] a, input [N-1:0] b, input pkg_t c); "
                       "endmodule")),
            "input a:?; input b:?; input c:?; ");
}

TEST(ModuleInterface, ListedPortsWithDeclarationsInTheBody) {
  EXPECT_EQ(Shape(Read("module TopModule(clk, d, q, y);\n  parameter W = 8;\n  input clk;\n"
                       "  input [W-1:0] d;\n  output q;\n  reg [3:0] q;\n  output reg y;\n"
                       "  task t; input [99:0] ignored; begin end endtask\nendmodule")),
            "input clk:1; input d:8; output q:4; output y:1; ");
  InterfaceReading r =
      ReadModuleInterface("module TopModule(a, b); input a; endmodule", "TopModule");
  EXPECT_EQ(r.outcome, Outcome::kUnreadable);
  EXPECT_NE(r.problem.find("port b has no direction"), std::string::npos) << r.problem;
}

TEST(ModuleInterface, NotFoundDefinedTwiceUnreadable) {
  EXPECT_EQ(ReadModuleInterface("module Other(); endmodule", "TopModule").outcome,
            Outcome::kNotFound);
  EXPECT_EQ(ReadModuleInterface("module TopModule(); endmodule module TopModule(); endmodule",
                                "TopModule")
                .outcome,
            Outcome::kDefinedTwice);
  EXPECT_EQ(ReadModuleInterface("module TopModule(input a b c); endmodule", "TopModule").outcome,
            Outcome::kUnreadable);
}

TEST(ModuleInterface, DifferencesNameThePort) {
  ModuleInterface ref = Read("module TopModule(input clk, input [7:0] in, output out); endmodule");
  EXPECT_EQ(InterfaceDifference(ref, ref), "");
  EXPECT_EQ(InterfaceDifference(
                ref, Read("module TopModule(input wire clk, input logic [8:1] in, output reg out);"
                          " endmodule")),
            "");
  EXPECT_EQ(InterfaceDifference(
                ref, Read("module TopModule(input clk, output [7:0] in, output out); endmodule")),
            "port `in` is declared output; the reference's is input");
  EXPECT_EQ(InterfaceDifference(
                ref, Read("module TopModule(input clk, input [3:0] in, output out); endmodule")),
            "port `in` is 4 bits wide; the reference's is 8");
  EXPECT_EQ(InterfaceDifference(
                ref, Read("module TopModule(input clk, input rst, input [7:0] in, output out); "
                          "endmodule")),
            "port `rst` is not a port of the reference");
  // Missing ports are left to the compiler (the testbench connects them by name).
  EXPECT_EQ(
      InterfaceDifference(ref, Read("module TopModule(input [7:0] in, output out); endmodule")),
      "");
  // An unknown width is not a difference.
  EXPECT_EQ(InterfaceDifference(
                ref, Read("module TopModule(input clk, input [W-1:0] in, output out); endmodule")),
            "");
}

// Every reference of the benchmark is read, with every port's width known (the isolation
// wrappers need them).
TEST(ModuleInterface, EveryVerilogEvalReferenceIsRead) {
  if (!testing::HaveSharedVerilogEval()) GTEST_SKIP() << "no ../shared/verilog-eval";
  for (Task task : {Task::kSpecToRtl, Task::kCodeComplete}) {
    auto ds = Dataset::Load(testing::SharedVerilogEval(), task);
    ASSERT_TRUE(ds.ok());
    for (const auto& p : ds->problems()) {
      auto ports = ReadReferenceInterface(p.reference);
      ASSERT_TRUE(ports.ok()) << p.name << ": " << ports.status().ToString();
      EXPECT_FALSE(ports->ports.empty() && p.name != "Prob001_zero") << p.name;
      for (const auto& port : ports->ports) EXPECT_TRUE(port.width.has_value()) << p.name;
      // The reference as a design has the reference's interface.
      ModuleInterface as_design = Read(ReferenceAsDesign(p.reference));
      EXPECT_EQ(InterfaceDifference(*ports, as_design), "") << p.name;
    }
  }
}

TEST(ConstantExpression, ArithmeticLiteralsAndBounds) {
  auto eval = [](const std::string& text) {
    auto t = TokenizeVerilog(text);
    ConstantScope scope(t);
    return scope.Evaluate({0, t.size()});
  };
  EXPECT_EQ(eval("8 * 4 - 1"), 31);
  EXPECT_EQ(eval("(1 << 4) - 1"), 15);
  EXPECT_EQ(eval("2 ** 10"), 1024);
  EXPECT_EQ(eval("1 ? 3 : 4"), 3);
  EXPECT_EQ(eval("8'hFF"), 255);
  EXPECT_EQ(eval("'d12 + 4'b1010"), 22);
  EXPECT_EQ(eval("32'hFFFF_FFFF"), 4294967295);
  EXPECT_EQ(eval("4'sb1111"), -1);
  EXPECT_EQ(eval("$clog2(17)"), 5);
  EXPECT_EQ(eval("10 >= 3 && 2 != 2"), 0);
  EXPECT_FALSE(eval("4'bx1").has_value());
  EXPECT_FALSE(eval("1 / 0").has_value());
  EXPECT_FALSE(eval("f(3)").has_value());
  EXPECT_FALSE(eval("9223372036854775807 + 1").has_value());
  // Parameter chains: each name once (a doubling chain would otherwise cost 2^60 steps), cycles
  // unknown.
  std::string chain = "parameter P0 = 1;";
  for (int i = 1; i < 60; ++i)
    chain += " P" + std::to_string(i) + " = P" + std::to_string(i - 1) + " + P" +
             std::to_string(i - 1) + ";";
  chain += " P59 P_A P_B";
  auto t = TokenizeVerilog(chain);  // views into `chain`
  ConstantScope scope(t);
  for (size_t i = 0; i + 2 < t.size(); ++i) {
    if (t[i].kind == VerilogToken::Kind::kIdentifier && t[i + 1].text == "=") {
      size_t end = i + 2;
      while (t[end].text != ";") ++end;
      scope.Define(t[i].text, {i + 2, end});
    }
  }
  const size_t n = t.size();
  EXPECT_EQ(scope.Evaluate({n - 3, n - 2}), int64_t{1} << 59);
  scope.Define("P_A", {n - 1, n});      // P_A = P_B
  scope.Define("P_B", {n - 2, n - 1});  // P_B = P_A
  EXPECT_FALSE(scope.Evaluate({n - 2, n - 1}).has_value());
}

}  // namespace
}  // namespace evald
