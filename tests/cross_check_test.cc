// Formal equivalence, counterexample replay and synthesis statistics, through the sandbox and
// Yosys, on the built-in problems: designs with known relations to their reference must get the
// outcome that relation implies, and no candidate difference counts unless simulation shows it.
#include <gtest/gtest.h>

#include <set>

#include "base/hash.h"
#include "base/py_text.h"
#include "datasets/dataset.h"
#include "evald/gate/ci_gate.h"
#include "evald/runs/cross_check_runner.h"
#include "evald/runs/dataset_audit.h"
#include "evald/runs/evaluation.h"
#include "evald/runs/grading_settings.h"
#include "evald/runs/scoring.h"
#include "evald/store/store.h"
#include "harness/calibration.h"
#include "harness/counterexample_replay.h"
#include "harness/cross_check.h"
#include "harness/failure_category.h"
#include "harness/grader.h"
#include "harness/reference_mutants.h"
#include "harness/verilog_lexer.h"
#include "test_support.h"

namespace evald {
namespace {

class CrossCheckTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto ds = Dataset::Load(testing::BuiltinDataset(), Task::kSpecToRtl);
    ASSERT_TRUE(ds.ok());
    dataset_ = new Dataset(std::move(*ds));
    worker_ = new SandboxWorker(SandboxOptions{}, 0);
    ASSERT_TRUE(worker_->Start().ok());
    auto v = worker_->Run(BuildYosysVersionJob(), std::chrono::milliseconds(30000));
    have_yosys_ = v.ok() && v->steps_size() == 1 && v->steps(0).exit_code() == 0;
  }
  static void TearDownTestSuite() {
    delete worker_;
    delete dataset_;
  }
  void SetUp() override {
    if (!have_yosys_) GTEST_SKIP() << "yosys does not run in the sandbox here";
  }

  const Problem& P(const std::string& name) {
    const Problem* p = dataset_->Find(name);
    EXPECT_NE(p, nullptr) << name;
    return *p;
  }
  FormalVerdict Formal(const std::string& problem, const std::string& design) {
    return CheckEquivalence(*worker_, P(problem), design, FormalOptions{},
                            DefaultLimits(SimulatorKind::kIcarus));
  }
  Verdict Simulate(const std::string& problem, const std::string& design) {
    const Problem& p = P(problem);
    Calibration cal = CalibrateProblem(*worker_, SimulatorKind::kIcarus,
                                       DefaultLimits(SimulatorKind::kIcarus), p);
    return GradeDesign(*worker_, SimulatorKind::kIcarus, DefaultLimits(SimulatorKind::kIcarus), p,
                       design, &cal);
  }

  static Dataset* dataset_;
  static SandboxWorker* worker_;
  static bool have_yosys_;
};
Dataset* CrossCheckTest::dataset_ = nullptr;
SandboxWorker* CrossCheckTest::worker_ = nullptr;
bool CrossCheckTest::have_yosys_ = false;

const char* kMuxHeader =
    "module TopModule(input sel, input [7:0] a, input [7:0] b, output logic [7:0] out);\n";
const char* kCounterHeader =
    "module TopModule(input clk, input reset, input en, output logic [3:0] q);\n";

TEST_F(CrossCheckTest, ARewrittenCombinationalDesignIsProven) {
  FormalVerdict v = Formal("Bi02_mux2_byte", std::string(kMuxHeader) +
                                                 "  always @* begin out = a; if (sel) out = b; "
                                                 "end\nendmodule\n");
  EXPECT_EQ(v.outcome, FormalOutcome::kProven) << v.detail;
  EXPECT_EQ(v.mode, "cycle");
}

// The testbench draws 400 random inputs out of 2^17: a design wrong on one of them passes
// simulation. Formal finds the input, and the replay shows the difference.
TEST_F(CrossCheckTest, ADifferenceTheTestbenchMissesIsFoundAndReplayed) {
  const std::string trojan =
      std::string(kMuxHeader) +
      "  assign out = (sel && a == 8'hC3 && b == 8'h3C) ? 8'h00 : (sel ? b : a);\n"
      "endmodule\n";
  Verdict sim = Simulate("Bi02_mux2_byte", trojan);
  ASSERT_TRUE(sim.passed) << "the testbench now covers the trojan's input: " << sim.detail;
  FormalVerdict v = Formal("Bi02_mux2_byte", trojan);
  EXPECT_EQ(v.outcome, FormalOutcome::kCounterexample) << v.detail;
  EXPECT_NE(v.detail.find("replayed in simulation"), std::string::npos) << v.detail;
  EXPECT_NE(v.detail.find("out reference="), std::string::npos) << v.detail;
}

TEST_F(CrossCheckTest, ARecodedCounterIsProvenOrBoundedAndAWrongOneRefuted) {
  // Counts 1..10 and outputs one less: the same outputs from a different state encoding.
  const std::string recoded = std::string(kCounterHeader) +
                              "  reg [3:0] c;\n"
                              "  always @(posedge clk)\n"
                              "    if (reset) c <= 1;\n"
                              "    else if (en) c <= (c == 10) ? 1 : c + 1;\n"
                              "  assign q = c - 1;\nendmodule\n";
  FormalVerdict good = Formal("Bi08_counter_mod10", recoded);
  EXPECT_TRUE(good.outcome == FormalOutcome::kProven || good.outcome == FormalOutcome::kBounded)
      << FormalOutcomeName(good.outcome) << ": " << good.detail;
  EXPECT_EQ(good.mode, "cycle");
  const std::string wrong = std::string(kCounterHeader) +
                            "  always @(posedge clk)\n"
                            "    if (reset) q <= 0;\n"
                            "    else if (en) q <= (q == 10) ? 0 : q + 1;\nendmodule\n";
  FormalVerdict bad = Formal("Bi08_counter_mod10", wrong);
  EXPECT_EQ(bad.outcome, FormalOutcome::kCounterexample) << bad.detail;
  EXPECT_GE(bad.bound, 10);  // the difference needs ten counting cycles after the reset
}

// A bug beyond K cycles: the counter is right for the first 40 cycles after its reset and wrong
// from then on. Every base case up to K holds and no induction step can: bounded(K), read from
// what Yosys itself prints (the budget is generous so that the 24 lengths are all tried).
TEST_F(CrossCheckTest, ABugBeyondTheBoundIsBoundedByTheBound) {
  const std::string late = std::string(kCounterHeader) +
                           "  reg [5:0] age;\n  reg [3:0] c;\n"
                           "  always @(posedge clk) begin\n"
                           "    if (reset) age <= 0; else if (age != 6'd63) age <= age + 1;\n"
                           "    if (reset) c <= 0; else if (en) c <= (c == 9) ? 0 : c + 1;\n"
                           "  end\n"
                           "  assign q = age > 6'd40 ? 4'd15 : c;\nendmodule\n";
  FormalOptions options;
  options.cpu_seconds = 20;
  FormalVerdict v = CheckEquivalence(*worker_, P("Bi08_counter_mod10"), late, options,
                                     DefaultLimits(SimulatorKind::kIcarus));
  EXPECT_EQ(v.outcome, FormalOutcome::kBounded) << FormalOutcomeName(v.outcome) << ": " << v.detail;
  EXPECT_EQ(v.bound, options.bound_cycles);
  EXPECT_EQ(v.mode, "cycle");
  options.bound_cycles = 48;  // the bug is within reach: refuted, and the replay shows it
  v = CheckEquivalence(*worker_, P("Bi08_counter_mod10"), late, options,
                       DefaultLimits(SimulatorKind::kIcarus));
  EXPECT_EQ(v.outcome, FormalOutcome::kCounterexample) << v.detail;
}

// A flip-flop with an initial value, and a design clocking it on the falling edge: they differ
// from the first falling edge on, before which both hold 0. The replay starts as the solver
// does, with no rising edge at time 0 (an assignment of 1 to a clk that was x is one, and made
// the reference latch x there, which hid the difference).
TEST_F(CrossCheckTest, ADifferenceFromTheFirstEdgeOnIsReplayed) {
  Problem p;
  p.name = "toggle_with_initial_value";
  p.reference =
      "module RefModule(input clk, input in, output logic out);\n"
      "  initial out = 0;\n  always @(posedge clk) out <= in ^ out;\nendmodule\n";
  const std::string falling =
      "module TopModule(input clk, input in, output logic out);\n"
      "  initial out = 0;\n  always @(negedge clk) out <= in ^ out;\nendmodule\n";
  FormalVerdict v = CheckEquivalence(*worker_, p, falling, FormalOptions{},
                                     DefaultLimits(SimulatorKind::kIcarus));
  EXPECT_EQ(v.mode, "clk2fflogic") << v.detail;
  EXPECT_EQ(v.outcome, FormalOutcome::kCounterexample) << v.detail;
  EXPECT_NE(v.detail.find("replayed in simulation"), std::string::npos) << v.detail;
}

// The problem's own assumptions: "it does not matter what your circuit does if both control
// inputs are 1". A design that gives the other control input priority differs from the
// reference only there: refuted without the assumption, and not refuted with it.
TEST_F(CrossCheckTest, ADifferenceOnlyWhereTheProblemAllowsAnythingIsNoRefutation) {
  Problem p;
  p.name = "shift_or_count";
  p.reference =
      "module RefModule(input clk, input shift_ena, input count_ena, input data,\n"
      "                 output reg [3:0] q);\n"
      "  always @(posedge clk)\n"
      "    if (shift_ena) q <= {q[2:0], data};\n"
      "    else if (count_ena) q <= q - 1'b1;\nendmodule\n";
  const std::string count_first =
      "module TopModule(input clk, input shift_ena, input count_ena, input data,\n"
      "                 output reg [3:0] q);\n"
      "  always @(posedge clk)\n"
      "    if (count_ena) q <= q - 1'b1;\n"
      "    else if (shift_ena) q <= {q[2:0], data};\nendmodule\n";
  const SimulatorLimits limits = DefaultLimits(SimulatorKind::kIcarus);
  FormalVerdict free = CheckEquivalence(*worker_, p, count_first, FormalOptions{}, limits);
  EXPECT_EQ(free.outcome, FormalOutcome::kCounterexample) << free.detail;
  p.assumptions = {"!(shift_ena && count_ena)"};
  FormalVerdict assumed = CheckEquivalence(*worker_, p, count_first, FormalOptions{}, limits);
  EXPECT_TRUE(assumed.outcome == FormalOutcome::kProven ||
              assumed.outcome == FormalOutcome::kBounded)
      << FormalOutcomeName(assumed.outcome) << ": " << assumed.detail;
  // The assumption narrows the inputs, nothing else: a design wrong where both are 0 is refuted.
  const std::string wrong =
      "module TopModule(input clk, input shift_ena, input count_ena, input data,\n"
      "                 output reg [3:0] q);\n"
      "  always @(posedge clk)\n"
      "    if (shift_ena) q <= {q[2:0], data};\n"
      "    else q <= q - 1'b1;\nendmodule\n";
  EXPECT_EQ(CheckEquivalence(*worker_, p, wrong, FormalOptions{}, limits).outcome,
            FormalOutcome::kCounterexample);
}

// Combinational blocks in both: `always @*` runs only once an input changes, so the replay's
// inputs must change at time 0 (from x, as a testbench's do) for either output to be defined.
TEST_F(CrossCheckTest, ADifferenceBetweenAlwaysBlocksIsReplayed) {
  Problem p;
  p.name = "and_in_an_always_block";
  p.reference =
      "module RefModule(input a, input b, output reg out);\n"
      "  always @(*) out = a & b;\nendmodule\n";
  const std::string wrong =
      "module TopModule(input a, input b, output reg out);\n"
      "  always @(*) out = a | b;\nendmodule\n";
  FormalVerdict v =
      CheckEquivalence(*worker_, p, wrong, FormalOptions{}, DefaultLimits(SimulatorKind::kIcarus));
  EXPECT_EQ(v.outcome, FormalOutcome::kCounterexample) << v.detail;
}

// Falling-edge flip-flops cannot be stepped once per cycle: the clock-phase model is used.
TEST_F(CrossCheckTest, AFallingEdgeDesignIsCheckedClockPhaseByPhase) {
  FormalVerdict v =
      Formal("Bi08_counter_mod10", std::string(kCounterHeader) +
                                       "  always @(negedge clk)\n"
                                       "    if (reset) q <= 0;\n"
                                       "    else if (en) q <= (q == 9) ? 0 : q + 1;\nendmodule\n");
  EXPECT_EQ(v.mode, "clk2fflogic") << v.detail;
  EXPECT_EQ(v.outcome, FormalOutcome::kCounterexample) << v.detail;
}

// A candidate the simulation does not reproduce is never a counterexample.
TEST_F(CrossCheckTest, ACandidateTheReplayDoesNotShowStaysUnknown) {
  FormalRun forged;
  forged.outcome = FormalOutcome::kCounterexample;
  forged.mode = "cycle";
  TraceStep step;
  step.inputs = {{"sel", "0"}, {"a", "00000001"}, {"b", "00000010"}};
  step.gold = {{"out", "00000001"}};
  step.gate = {{"out", "11111111"}};  // what a wrong solver might claim
  forged.trace = {step};
  const std::string right = std::string(kMuxHeader) + "  assign out = sel ? b : a;\nendmodule\n";
  ReplayResult r = ReplayCounterexample(*worker_, P("Bi02_mux2_byte"), right, forged,
                                        DefaultLimits(SimulatorKind::kIcarus));
  EXPECT_TRUE(r.ran) << r.problem;
  EXPECT_EQ(r.differing_steps, 0);
  const std::string wrong = std::string(kMuxHeader) + "  assign out = sel ? a : b;\nendmodule\n";
  r = ReplayCounterexample(*worker_, P("Bi02_mux2_byte"), wrong, forged,
                           DefaultLimits(SimulatorKind::kIcarus));
  EXPECT_TRUE(r.ran) << r.problem;
  EXPECT_EQ(r.differing_steps, 1);
  EXPECT_NE(r.first_difference.find("out reference=00000001 design=00000010"), std::string::npos)
      << r.first_difference;
}

// A design that prints the solver's success line while Yosys reads it gains nothing: only the
// files Yosys's SAT command writes are read.
TEST_F(CrossCheckTest, PrintedSuccessLinesAreNotBelieved) {
  FormalVerdict v = Formal(
      "Bi02_mux2_byte",
      std::string(kMuxHeader) +
          "  initial $display(\"Induction step proven: SUCCESS!\");\n"
          "  initial $display(\"Reached maximum number of time steps -> proved base case for 99 "
          "steps: SUCCESS!\");\n"
          "  assign out = sel ? a : b;\nendmodule\n");
  EXPECT_EQ(v.outcome, FormalOutcome::kCounterexample) << v.detail;
}

// An attribute means nothing to the simulators and much to Yosys: `(* blackbox *)` would have
// Yosys read an empty module. Formal reads the design without it, as the simulator runs it.
TEST_F(CrossCheckTest, YosysSeesNoAttributeTheSimulatorIgnores) {
  FormalVerdict v = Formal("Bi02_mux2_byte", "(* blackbox *)\n" + std::string(kMuxHeader) +
                                                 "  assign out = sel ? b : a;\nendmodule\n");
  EXPECT_EQ(v.outcome, FormalOutcome::kProven) << v.detail;
}

// Yosys drops delays and reads a level-sensitive block as combinational logic of all it reads;
// the simulator runs both as written. Each design here simulates differently from the
// reference (wrong for a moment after every change; stale when only `b` changes), the first
// passes the testbench, and Yosys by itself proves both equivalent: formal must not judge
// them, so they are unknown (an unverified pass), never proven.
TEST_F(CrossCheckTest, WhatYosysReadsDifferentlyFromTheSimulatorIsNotJudged) {
  const std::string glitch = "`timescale 1ps/1ps\n" + std::string(kMuxHeader) +
                             "  always @* begin out = ~(sel ? b : a); #1 out = sel ? b : a; end\n"
                             "endmodule\n";
  const std::string stale =
      std::string(kMuxHeader) + "  always @(sel or a) out = sel ? b : a;\nendmodule\n";
  for (const std::string& design : {glitch, stale}) {
    FormalRun yosys_alone = ParseFormalResponse(
        *worker_->Run(BuildFormalJob(P("Bi02_mux2_byte"), design, "n0nce", FormalOptions{}),
                      std::chrono::milliseconds(60000)),
        FormalOptions{});
    EXPECT_EQ(yosys_alone.outcome, FormalOutcome::kProven) << design << yosys_alone.reason;
    FormalVerdict v = Formal("Bi02_mux2_byte", design);
    EXPECT_EQ(v.outcome, FormalOutcome::kUnknown) << design;
    EXPECT_NE(v.detail.find("does not model this design as the simulator runs it"),
              std::string::npos)
        << v.detail;
  }
  EXPECT_TRUE(Simulate("Bi02_mux2_byte", glitch).passed);
}

// Two designs whose compiled texts differ only in comments and layout are one miter: checked
// once. A design with the reference's tokens is the reference. A real change is checked anew.
TEST_F(CrossCheckTest, DesignsThatDifferOnlyInCommentsAndLayoutShareOneCheck) {
  VerdictCache no_store(nullptr);
  CrossCheckOptions options;
  options.formal = true;
  CrossCheckRunner runner(options, no_store);
  runner.set_yosys_version("test");
  SimulatorTool sim;
  sim.base = sim.key_limits = DefaultLimits(SimulatorKind::kIcarus);
  sim.version = "test";
  auto check = [&](const std::string& code) {
    Verdict v;
    v.passed = true;
    v.category = category::kPass;
    runner.Run(*worker_, P("Bi02_mux2_byte"), code, sim, "", &v);
    return v.cross.formal;
  };
  const std::string a =
      std::string(kMuxHeader) + "  always @* begin out = a; if (sel) out = b; end\nendmodule\n";
  const std::string b =
      "// sample 2\n" + std::string(kMuxHeader) +
      "\n  always @*\n    begin\n      out = a;   // default\n      if (sel) out = b;\n"
      "    end\nendmodule\n";
  EXPECT_EQ(check(a).outcome, FormalOutcome::kProven);
  EXPECT_EQ(check(b).outcome, FormalOutcome::kProven);
  EXPECT_EQ(runner.runs(), 1);
  EXPECT_EQ(runner.shared_hits(), 1);
  FormalVerdict other = check(std::string(kMuxHeader) + "  assign out = sel ? a : b;\nendmodule\n");
  EXPECT_EQ(other.outcome, FormalOutcome::kCounterexample) << other.detail;
  EXPECT_EQ(runner.runs(), 2);
  FormalVerdict ref =
      check("// the reference, reindented\n" +
            py::ReplaceAll(ReferenceAsDesign(P("Bi02_mux2_byte").reference), "\n", "\n\n  "));
  EXPECT_EQ(ref.mode, "identical") << ref.detail;
  EXPECT_EQ(runner.runs(), 2);
}

TEST_F(CrossCheckTest, UnsupportedDesignsAreUnknownWithAReason) {
  FormalVerdict v = Formal("Bi02_mux2_byte", std::string(kMuxHeader) +
                                                 "  assign out = missing_module_output;\n"
                                                 "  missing m(.x(out));\nendmodule\n");
  EXPECT_EQ(v.outcome, FormalOutcome::kUnknown);
  EXPECT_FALSE(v.detail.empty());
}

TEST_F(CrossCheckTest, SynthesisCountsCellsAreaAndDepth) {
  SynthStats s = Synthesize(*worker_,
                            std::string(kCounterHeader) +
                                "  always @(posedge clk)\n"
                                "    if (reset) q <= 0;\n"
                                "    else if (en) q <= (q == 9) ? 0 : q + 1;\n"
                                "endmodule\n",
                            "TopModule", 20);
  ASSERT_TRUE(s.ok) << s.problem;
  EXPECT_EQ(s.flip_flops, 4);
  EXPECT_GT(s.cells, 4);
  EXPECT_GT(s.area, 4 * 4.67);
  EXPECT_GE(s.depth, 2);
  EXPECT_TRUE(s.problem.empty()) << s.problem;
}

// Pure parsing: the solver's table and the synthesis reports.
TEST(CrossCheckParsing, SatTableRowsBecomeSteps) {
  const std::string table =
      "  Time Signal Name   Dec  Hex  Bin\n"
      "  init \\$flatten\\gold.q#sampled  0 0 0000\n"
      "     1 \\in_a   1   1   0001\n"
      "     1 \\gold_out  --  --  x1x0\n"
      "     1 \\gate_out  3   3   0011\n"
      "     2 \\in_a   2   2   0010\n"
      "     2 \\gold_out  2   2   0010\n"
      "     2 \\gate_out  5   5   0101\n"
      "     7 \\in_a   2   2   0010\n"   // out of order: skipped
      "     3 \\in_a   1   1   01q1\n";  // not a bit string: skipped
  auto steps = ParseSatTable(table);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].inputs[0], (std::pair<std::string, std::string>("a", "0001")));
  EXPECT_EQ(steps[0].gold[0].second, "x1x0");
  EXPECT_EQ(steps[1].gate[0].second, "0101");
}

TEST(CrossCheckParsing, ReplayBenchRefusesNamesThatAreNotPlainIdentifiers) {
  TraceStep s;
  s.inputs = {{"a); $finish; //", "1"}};
  s.gold = {{"out", "1"}};
  s.gate = {{"out", "0"}};
  EXPECT_FALSE(BuildReplayBench({s}, "cycle", "n").ok());
}

TEST(CrossCheckParsing, TheLayoutFreeKeyKeepsEverythingButCommentsAndLayout) {
  EXPECT_EQ(LayoutFreeKey("assign y = a & b; // and\n"), LayoutFreeKey("\n\n  assign  y=\ta &b;"));
  EXPECT_EQ(LayoutFreeKey("x = /* c */ y;"), LayoutFreeKey("x = y;"));
  EXPECT_NE(LayoutFreeKey("y = a--b;"), LayoutFreeKey("y = a - -b;"));
  EXPECT_NE(LayoutFreeKey("y = a <= b;"), LayoutFreeKey("y = a < = b;"));
  EXPECT_NE(LayoutFreeKey("$display(\"a\");"), LayoutFreeKey("$display(\"b\");"));
  EXPECT_NE(LayoutFreeKey("\\foo  = 1;"), LayoutFreeKey("foo = 1;"));
  EXPECT_NE(LayoutFreeKey("a = \"b\";"), LayoutFreeKey("a = b;"));
  EXPECT_NE(LayoutFreeKey("`timescale 1ns/1ps\nmodule m; endmodule"),
            LayoutFreeKey("`timescale 1ns/1ps module m; endmodule"));
  EXPECT_NE(LayoutFreeKey("8'hff"), LayoutFreeKey("8'hfe"));
}

TEST(CrossCheckParsing, AttributesAreGoneForYosysEventControlsStay) {
  EXPECT_EQ(StripAttributes("(* full_case, parallel_case *) case (s)"), "  case (s)");
  EXPECT_EQ(StripAttributes("always @(*) x = y;"), "always @(*) x = y;");
  EXPECT_EQ(StripAttributes("always @(* ) x = y;"), "always @(* ) x = y;");
  EXPECT_EQ(StripAttributes("(* a = \"*)\" *)wire w;"), " wire w;");  // a `*)` in a string
  EXPECT_EQ(StripAttributes("(* init = 1,\n keep *) reg r;"), " \n reg r;");
  EXPECT_EQ(StripAttributes("x = \"(* not one *)\";"), "x = \"(* not one *)\";");
  EXPECT_EQ(StripAttributes("y = a ** 2; (* unterminated"), "y = a ** 2;  ");
  EXPECT_EQ(ForYosys("(* blackbox *) module M; always_comb x = 1; endmodule"),
            "  module M; always @* x = 1; endmodule");
}

TEST(CrossCheckParsing, StatAndLongestPath) {
  SynthStats s;
  ParseStat("   Number of cells:                 5\n     $_AND_       2\n     $_SDFF_PP0_     3\n",
            &s);
  EXPECT_EQ(s.cells, 5);
  EXPECT_EQ(s.flip_flops, 3);
  EXPECT_NEAR(s.area, 2 * 1.33 + 3 * 5.67, 1e-9);
  EXPECT_EQ(ParseLongestPath("Longest topological path in TopModule (length=7):\n"), 7);
  EXPECT_EQ(ParseLongestPath("nothing"), -1);
}

}  // namespace
}  // namespace evald

namespace evald {
namespace {

// Through the one run pipeline: a pass that formal refutes is reported as such, strict pass@k
// leaves it out, the strict view of the report is what compare and gate judge, and a second
// evaluation answers every cross-check from the store.
class CrossCheckPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ds = Dataset::Load(testing::BuiltinDataset(), Task::kSpecToRtl);
    ASSERT_TRUE(ds.ok());
    dataset_ = std::make_unique<Dataset>(std::move(*ds));
    dir_ = "/tmp/evald-cross-check-test-" + RandomHex(6);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  static std::string Line(const std::string& problem, int index, const std::string& code) {
    std::string escaped;
    for (char c : code)
      escaped += c == '\n' ? std::string("\\n") : c == '"' ? "\\\"" : std::string(1, c);
    return "{\"problem\": \"" + problem + "\", \"index\": " + std::to_string(index) +
           ", \"code\": \"" + escaped + "\"}\n";
  }
  StatusOr<v1::EvalReport> Run(const std::string& jsonl, Store* store = nullptr) {
    EvalOptions opts;
    *opts.grading.mutable_cross_checks() = DefaultCrossCheckSettings();
    opts.grading.mutable_cross_checks()->set_synthesis(true);
    opts.grading.mutable_cross_checks()->set_optional(false);
    opts.resources.store = store;
    return Evaluate(*dataset_, ParseSamplesJsonl(jsonl), opts);
  }

  std::unique_ptr<Dataset> dataset_;
  std::string dir_;
};

const char* kTrojan =
    "module TopModule(input sel, input [7:0] a, input [7:0] b, output logic [7:0] out);\n"
    "  assign out = (sel && a == 8'hC3 && b == 8'h3C) ? 8'h00 : (sel ? b : a);\nendmodule\n";
const char* kRight =
    "module TopModule(input sel, input [7:0] a, input [7:0] b, output logic [7:0] out);\n"
    "  assign out = sel ? b : a;\nendmodule\n";

TEST_F(CrossCheckPipelineTest, ARefutedPassIsReportedAndLeftOutOfStrictPassAtK) {
  const std::string jsonl = Line("Bi02_mux2_byte", 0, kTrojan) + Line("Bi02_mux2_byte", 1, kRight);
  auto report = Run(jsonl);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  if (report->grading().cross_checks().yosys_version().empty()) GTEST_SKIP() << "no yosys";
  ASSERT_EQ(report->samples_size(), 2);
  const auto& trojan = report->samples(0);
  EXPECT_TRUE(trojan.passed());
  EXPECT_EQ(trojan.formal().outcome(), "counterexample") << trojan.formal().detail();
  EXPECT_EQ(trojan.cross_check(), "refuted");
  EXPECT_FALSE(trojan.strict_passed());
  const auto& right = report->samples(1);
  EXPECT_EQ(right.formal().outcome(), "proven");
  EXPECT_TRUE(right.strict_passed());
  EXPECT_TRUE(right.has_synthesis());
  EXPECT_TRUE(right.synthesis().problem().empty()) << right.synthesis().problem();
  EXPECT_GT(right.synthesis().cells(), 0);
  EXPECT_GT(right.synthesis().area_ratio(), 0);
  EXPECT_EQ(report->summary().formal_refuted(), 1);
  EXPECT_EQ(report->problems(0).strict_c(), 1);
  EXPECT_DOUBLE_EQ(report->summary().pass_at().at("1"), 1.0);
  EXPECT_DOUBLE_EQ(report->summary().strict_pass_at().at("1"), 0.5);

  auto strict = ReportForMetric(*report, "strict");
  ASSERT_TRUE(strict.ok());
  EXPECT_DOUBLE_EQ(strict->summary().pass_at().at("1"), 0.5);
  EXPECT_EQ(strict->problems(0).c(), 1);
  auto simulation = ReportForMetric(*report, "simulation");
  ASSERT_TRUE(simulation.ok());
  EXPECT_DOUBLE_EQ(simulation->summary().pass_at().at("1"), 1.0);
  EXPECT_FALSE(ReportForMetric(*report, "best-of").ok());
}

// A pass formal cannot judge (Yosys 0.23 does not read `fork`, Icarus simulates it) is
// "unverified": counted on its own, and never strict.
TEST_F(CrossCheckPipelineTest, APassFormalCannotJudgeIsUnverifiedNeverStrict) {
  const std::string unreadable =
      "module TopModule(input sel, input [7:0] a, input [7:0] b, output logic [7:0] out);\n"
      "  assign out = sel ? b : a;\n  initial fork join\nendmodule\n";
  auto report = Run(Line("Bi02_mux2_byte", 0, unreadable) + Line("Bi02_mux2_byte", 1, kRight));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  if (report->grading().cross_checks().yosys_version().empty()) GTEST_SKIP() << "no yosys";
  const auto& s = report->samples(0);
  EXPECT_TRUE(s.passed()) << s.detail();
  EXPECT_EQ(s.formal().outcome(), "unknown") << s.formal().detail();
  EXPECT_EQ(s.cross_check(), "unverified");
  EXPECT_FALSE(s.strict_passed());
  EXPECT_TRUE(report->samples(1).strict_passed());
  EXPECT_EQ(report->summary().formal_unverified(), 1);
  EXPECT_EQ(report->summary().formal_refuted(), 0);
  EXPECT_EQ(report->problems(0).formal_unverified(), 1);
  EXPECT_DOUBLE_EQ(report->summary().strict_pass_at().at("1"), 0.5);
  auto strict = ReportForMetric(*report, "strict");
  ASSERT_TRUE(strict.ok());
  EXPECT_DOUBLE_EQ(strict->summary().pass_at().at("1"), 0.5);
  // Its own metric (for comparisons) and its own gate.
  auto unverified = ReportForMetric(*report, "unverified");
  ASSERT_TRUE(unverified.ok());
  EXPECT_DOUBLE_EQ(unverified->summary().pass_at().at("1"), 0.5);
  EXPECT_EQ(unverified->problems(0).c(), 1);
  GateOptions gate;
  gate.max_unverified = 0.4;
  GateResult over = EvaluateGate(*report, gate);
  EXPECT_FALSE(over.passed);
  ASSERT_EQ(over.checks.size(), 1u);
  EXPECT_NE(over.checks[0].message.find("1 of 2 passes unverified"), std::string::npos)
      << over.checks[0].message;
  gate.max_unverified = 0.5;
  EXPECT_TRUE(EvaluateGate(*strict, gate).passed) << "a strict view counts the same passes";
}

TEST_F(CrossCheckPipelineTest, AReportWithoutFormalHasNoStrictView) {
  v1::EvalReport plain;
  EXPECT_FALSE(ReportForMetric(plain, "strict").ok());
}

TEST_F(CrossCheckPipelineTest, ASecondEvaluationTakesEveryCrossCheckFromTheStore) {
  auto store = Store::Open(dir_);
  ASSERT_TRUE(store.ok());
  const std::string jsonl = Line("Bi02_mux2_byte", 0, kTrojan) + Line("Bi02_mux2_byte", 1, kRight) +
                            Line("Bi08_counter_mod10", 0,
                                 "module TopModule(input clk, input reset, input en, output logic "
                                 "[3:0] q);\n  always @(posedge clk)\n    if (reset) q <= 0;\n"
                                 "    else if (en) q <= (q == 9) ? 0 : q + 1;\nendmodule\n");
  auto first = Run(jsonl, store->get());
  ASSERT_TRUE(first.ok());
  if (first->grading().cross_checks().yosys_version().empty()) GTEST_SKIP() << "no yosys";
  auto second = Run(jsonl, store->get());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->summary().cache_hits(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(second->samples(i).formal().outcome(), first->samples(i).formal().outcome());
    EXPECT_EQ(second->samples(i).formal().detail(), first->samples(i).formal().detail());
    EXPECT_EQ(second->samples(i).cross_check(), first->samples(i).cross_check());
    EXPECT_EQ(second->samples(i).synthesis().cells(), first->samples(i).synthesis().cells());
    EXPECT_DOUBLE_EQ(second->samples(i).synthesis().area_ratio(),
                     first->samples(i).synthesis().area_ratio());
  }
}

TEST(DatasetAudit, MutantsOfAReferenceAreCaughtOrFoundEquivalent) {
  auto ds = Dataset::Load(testing::BuiltinDataset(), Task::kSpecToRtl);
  ASSERT_TRUE(ds.ok());
  AuditOptions opts;
  opts.problems = {"Bi08_counter_mod10", "Bi09_shift4"};
  auto report = AuditDataset(*ds, opts);
  if (!report.ok() && report.status().message().find("yosys") != std::string::npos)
    GTEST_SKIP() << report.status().ToString();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->problems_size(), 2);
  for (const auto& p : report->problems()) {
    EXPECT_EQ(p.self_check(), "proven") << p.problem();
    EXPECT_GT(p.mutants(), 2) << p.problem();
    EXPECT_EQ(p.mutants(), p.invalid() + p.equivalent() + p.bounded() + p.different() + p.unknown())
        << p.problem();
    EXPECT_EQ(p.different(), p.caught() + p.missed());
    for (const auto& m : p.details()) {
      if (m.finding() == "caught") {
        EXPECT_NE(m.verdict(), ".") << m.description();
      }
      if (m.finding() == "missed") {
        EXPECT_EQ(m.verdict(), ".") << m.description();
      }
      if (m.finding() == "caught" || m.finding() == "missed") {
        EXPECT_NE(m.detail().find("replayed in simulation"), std::string::npos) << m.detail();
      }
    }
  }
  EXPECT_GT(report->different(), 0);
}

TEST(ReferenceMutants, OneEditEachNeverInCommentsOrPorts) {
  const std::string design =
      "module TopModule(input clk, input reset, input [3:0] d, output reg [3:0] q);\n"
      "  // a + b & c in a comment\n"
      "  wire [3:0] t = d & 4'b0101;\n"
      "  always @(posedge clk)\n"
      "    if (reset) q <= 0;\n"
      "    else q <= q + t;\nendmodule\n";
  std::vector<Mutant> mutants = MutateDesign(design, 10);
  std::set<std::string> kinds;
  for (const Mutant& m : mutants) {
    kinds.insert(m.kind);
    EXPECT_NE(m.text, design);
    EXPECT_NE(m.text.find("// a + b & c in a comment"), std::string::npos) << m.description;
    EXPECT_NE(m.text.find("input [3:0] d, output reg [3:0] q"), std::string::npos) << m.description;
  }
  for (const char* k : {"operator", "constant", "width", "edge", "reset-polarity"})
    EXPECT_TRUE(kinds.count(k)) << k;
  EXPECT_EQ(MutateDesign(design, 10).size(), mutants.size());  // deterministic
}

}  // namespace
}  // namespace evald
