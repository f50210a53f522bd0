#include "harness/integrity_check.h"
#include "harness/system_names.h"

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

// Verilator drops carriage returns, and ^Z and the byte order mark's bytes in code, before it
// reads (harness/dropped_bytes.h): where that joins two tokens or opens a comment, or a lone
// carriage return ends a line for Icarus alone, the two simulators read two programs, and the
// design is refused; where it changes nothing, it passes.
TEST(Integrity, BytesOneSimulatorDropsMayNotChangeTheReading) {
  const std::string head = "module TopModule(input a, output b);\n";
  // CR LF line ends; UTF-8 (the mark's bytes among them) in comments, strings, escaped names.
  EXPECT_FALSE(Violates(head + "assign b = a; // x\r\n/* y\r\n */ endmodule\r\n"));
  EXPECT_FALSE(Violates(head + "// \xef\xbb\xbf\xe7\x8a\xb6\xe6\x80\x81\xef\xbc\x88x\xef\xbc\x89\n"
                               "/* \xef\xbc\x9a *\xef\xbb\xbf/ */ assign b = a; endmodule"));
  EXPECT_FALSE(Violates(head + "initial $display(\"\xef\xbc\x88\x1a\"); endmodule"));
  EXPECT_FALSE(Violates(head + "wire \\w\xef\xbb\xbf ; endmodule"));
  EXPECT_FALSE(Violates(head + "assign b = a\xef\xbc\x88; endmodule"));  // stray, both refuse it
  // Two names joined into one, a system name made whole, a comment opened.
  EXPECT_TRUE(Violates(head + "wire x\x1ay; endmodule"));
  EXPECT_TRUE(Violates(head + "initial $dis\xefplay(\"x\"); endmodule"));
  EXPECT_TRUE(Violates(head + "wire x\xbb\xbf"
                              "1; endmodule"));
  auto f = CheckDesignIntegrity(head + "/\xef* / initial #1 \\$finish ; // */\nendmodule");
  ASSERT_TRUE(f.violation);
  EXPECT_NE(f.reason.find("Verilator drops"), std::string::npos) << f.reason;
  // A lone carriage return: a line comment ends there for Icarus alone.
  f = CheckDesignIntegrity(head + "assign b = a; // x\r initial $finish;\nendmodule");
  ASSERT_TRUE(f.violation);
  EXPECT_NE(f.reason.find("carriage return"), std::string::npos) << f.reason;
}

std::string Module(const std::string& body) {
  return "module TopModule(input clk, input a, output reg q, output w);\n" + body + "\nendmodule\n";
}

// Every system task and function Icarus Verilog 11-12 and Verilator 5 implement beyond the
// allow-list (read from their sources: vpi/*.c and the elaborator of Icarus, src/verilog.l of
// Verilator) is refused by name; the allowed ones are accepted.
TEST(IntegrityAllowList, SimulatorExtensionsAreRefused) {
  const char* const kRefused[] = {
      // Icarus: vpi modules (system, v2005_math, v2009, vhdl_sys, vhdl_textio, va_math ...)
      "$ivlh_file_open", "$ivlh_readline", "$ivlh_read", "$ivlh_write", "$ivlh_writeline",
      "$ivlh_shift_left", "$ivlh_rising_edge", "$ivl_string_method$len", "$ivl_enum_method$name",
      "$ivl_darray_method$delete", "$ivl_queue_method$push_back", "$q_initialize", "$q_add",
      "$q_remove", "$q_full", "$q_exam", "$countdrivers", "$getpattern", "$deposit", "$table_model",
      "$simparam", "$simparam$str", "$mti_random", "$mti_dist_uniform", "$finish_and_return",
      "$readmempath", "$sreadmemb", "$sreadmemh", "$dumpports", "$dumpall", "$fopenr", "$fopenw",
      "$fopena", "$fputc", "$fread", "$fscanf", "$fseek", "$ftell", "$rewind", "$ungetc", "$feof",
      "$ferror", "$fflush", "$fgets", "$fgetc", "$fstrobe", "$fmonitor", "$fwrite", "$fdisplay",
      "$fclose", "$fopen", "$sdf_annotate", "$scale", "$abstime", "$simtime", "$vpi_tree", "$abs",
      "$min", "$max", "$str", "$async$and$array", "$sync$or$plane", "$info", "$warning", "$error",
      "$fatal", "$finish", "$stop", "$timeformat", "$printtimescale", "$monitoron", "$monitoroff",
      "$save", "$restart", "$incsave", "$input", "$key", "$nokey", "$log", "$nolog", "$list",
      "$scope", "$showscopes", "$showvars", "$test$plusargs", "$value$plusargs", "$urandom",
      "$urandom_range", "$readmemb", "$readmemh", "$writememb", "$writememh", "$dumpfile",
      "$dumpvars", "$dumpon", "$dumpoff", "$dumplimit", "$dumpflush",
      // Verilator (src/verilog.l)
      "$c", "$c8", "$c16", "$c32", "$c64", "$cpure", "$system", "$exit", "$stacktrace",
      "$assertoff", "$asserton", "$assertkill", "$assertcontrol", "$coverage_control",
      "$coverage_get", "$coverage_merge", "$coverage_save", "$get_coverage", "$load_coverage_db",
      "$set_coverage_db_name", "$get_initial_random_seed", "$frewind", "$typename", "$timeunit",
      "$timeprecision", "$global_clock", "$inferred_clock", "$inferred_disable", "$setup", "$hold",
      "$setuphold", "$width", "$period", "$recovery", "$removal", "$nochange", "$skew", "$timeskew",
      "$fullskew", "$isunbounded", "$sscanf",
      // neither: unknown names are refused too
      "$evald_result", "$anything"};
  for (const char* name : kRefused) {
    auto f = CheckDesignIntegrity(Module("  initial " + std::string(name) + "(w);"));
    EXPECT_TRUE(f.violation) << name;
    EXPECT_NE(f.reason.find(name), std::string::npos) << f.reason;
  }
  for (const auto& allowed : AllowedSystemNames()) {
    if (allowed.needs_seed_variable) continue;
    auto f = CheckDesignIntegrity(Module("  initial q = " + std::string(allowed.name) + "(a);"));
    EXPECT_FALSE(f.violation) << allowed.name << ": " << f.reason;
  }
}

TEST(IntegrityAllowList, RandomNeedsASeedOfTheDesignsOwn) {
  EXPECT_FALSE(
      Violates(Module("  integer seed = 1;\n  always @(posedge clk) q <= $random(seed);")));
  EXPECT_TRUE(Violates(Module("  always @(posedge clk) q <= $random;")));
  EXPECT_TRUE(Violates(Module("  always @(posedge clk) q <= $random();")));
  EXPECT_TRUE(Violates(Module("  always @(posedge clk) q <= $random(7);")));
  EXPECT_TRUE(Violates(Module("  always @(posedge clk) q <= $urandom(seed);")));
  EXPECT_FALSE(Violates(Module("  integer s = 1;\n  initial q = $dist_uniform(s, 0, 1);")));
}

TEST(IntegrityAllowList, EscapedSystemNamesAndScopeNames) {
  EXPECT_TRUE(Violates(Module("  initial \\$finish ;")));
  EXPECT_TRUE(Violates(Module("  initial \\$fopen (\"x\");")));
  EXPECT_TRUE(Violates(Module("  assign w = \\RefModule ;")));
  EXPECT_FALSE(Violates(Module("  wire \\force ;\n  assign w = \\force ;")));  // a plain name
  EXPECT_FALSE(Violates(Module("  int q2[$];")));                              // a queue
}

TEST(IntegrityNets, ForceReleaseDeassignAndProceduralAssignAreRefused) {
  EXPECT_TRUE(Violates(Module("  initial force a = 1'bx;")));
  EXPECT_TRUE(Violates(Module("  initial release a;")));
  EXPECT_TRUE(Violates(Module("  initial deassign q;")));
  EXPECT_TRUE(Violates(Module("  always @(a) assign q = a;")));
  EXPECT_TRUE(Violates(Module("  always @(posedge clk) begin if (a) assign q = 1; end")));
  EXPECT_TRUE(Violates(Module("  initial #1 if (a) ; else assign q = 0;")));
  EXPECT_TRUE(Violates(Module("  task t; assign q = 1; endtask")));
  EXPECT_TRUE(Violates(Module("  always_comb case (a) 1'b1: assign q = 1; endcase")));
  EXPECT_TRUE(Violates("config c; design tb; endconfig\nmodule TopModule(); endmodule"));
}

TEST(IntegrityNets, ContinuousAssignmentsStayAllowed) {
  EXPECT_FALSE(Violates(Module("  assign w = a;")));
  EXPECT_FALSE(Violates(Module("  always @(posedge clk) q <= a;\n  assign w = a;")));
  EXPECT_FALSE(
      Violates(Module("  always @(posedge clk) if (a) q <= 1; else q <= 0;\n  assign w = a;")));
  EXPECT_FALSE(
      Violates(Module("  always @* case (a) 1'b0: q = 0; default: q = 1; endcase\n"
                      "  assign w = ~a;")));
  EXPECT_FALSE(Violates(Module("  initial begin q = 0; end\n  assign w = a;")));
  EXPECT_FALSE(Violates(Module("  function f(input x); f = x; endfunction\n  assign w = f(a);")));
  EXPECT_FALSE(Violates(Module("  always #5 q = ~q;\n  assign w = a;")));
  EXPECT_FALSE(
      Violates(Module("  always_ff @(posedge clk) begin : b q <= a; end : b\n  assign w = a;")));
  EXPECT_FALSE(Violates(
      Module("  genvar i;\n  generate if (1) begin : g assign w = a; end else begin assign w = 0; "
             "end endgenerate")));
  EXPECT_FALSE(Violates(Module("  always @(posedge clk) forever #1 q = a;\n  assign w = a;")));
}

TEST(IntegrityNets, NestingIsBounded) {
  std::string deep = "  initial ";
  for (int i = 0; i < 5000; ++i) deep += "if (a) ";
  deep += "q = 1;";
  auto f = CheckDesignIntegrity(Module(deep));
  EXPECT_TRUE(f.violation);
  EXPECT_NE(f.reason.find("nested"), std::string::npos) << f.reason;
  // A long else-if chain is no nesting.
  std::string chain = "  always @* if (a) q = 0;";
  for (int i = 0; i < 5000; ++i) chain += " else if (a) q = 1;";
  chain += " else q = 0;\n  assign w = a;";
  EXPECT_FALSE(Violates(Module(chain)));
}

// What is compiled after preprocessing: no backtick but a few inert directives, alone on their
// lines, in their plain form; no comment.
TEST(IntegrityCompiled, NothingIsLeftToExpandAgain) {
  const std::string m = Module("  assign w = a;");
  EXPECT_FALSE(CheckCompiledDesign(m).violation);
  EXPECT_FALSE(CheckCompiledDesign("`timescale 1ns/1ps\n" + m).violation);
  EXPECT_FALSE(
      CheckCompiledDesign("`timescale 1 ns / 10 ps\n`default_nettype none\n" + m).violation);
  EXPECT_FALSE(CheckCompiledDesign("`resetall\n`celldefine\n" + m + "`endcelldefine\n").violation);
  for (const std::string& bad :
       {"`define FIN $finish\n" + m, "`FIN\n" + m, "`timescale 1ns/1ps module x; endmodule\n" + m,
        "`timescale `T\n" + m, "`default_nettype `W\n" + m, "`timescale 3ns/1ps\n" + m,
        "`line 1 \"x\" 0\n" + m, "`pragma protect\n" + m, "`__FILE__\n" + m,
        Module("  initial $display(\"`FIN\");"), Module("  wire \\a`b ;"), "// a comment\n" + m,
        "/* c */" + m, "`\n" + m}) {
    auto f = CheckCompiledDesign(bad);
    EXPECT_TRUE(f.violation) << bad;
  }
  EXPECT_TRUE(InertDirective("timescale"));
  EXPECT_FALSE(InertDirective("define"));
}

}  // namespace
}  // namespace evald
