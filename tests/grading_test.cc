// Verdict categories end to end: designs with known defects, graded through the sandbox and
// Icarus, must land in the category verilog-eval's analysis uses for that defect.
#include <gtest/gtest.h>

#include <functional>
#include <utility>

#include "base/py_text.h"
#include "datasets/dataset.h"
#include "harness/calibration.h"
#include "harness/failure_category.h"
#include "test_support.h"

namespace evald {
namespace {

class GradingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto ds = Dataset::Load(testing::BuiltinDataset(), Task::kSpecToRtl);
    ASSERT_TRUE(ds.ok());
    dataset_ = new Dataset(std::move(*ds));
    worker_ = new SandboxWorker(SandboxOptions{}, 0);
    ASSERT_TRUE(worker_->Start().ok());
  }
  static void TearDownTestSuite() {
    delete worker_;
    delete dataset_;
  }

  Verdict Grade(const std::string& problem_name, const std::string& code,
                bool stop_at_first_mismatch = false) {
    const Problem* p = dataset_->Find(problem_name);
    EXPECT_NE(p, nullptr);
    auto it = cal_.find(problem_name);
    if (it == cal_.end())
      it = cal_.emplace(problem_name, CalibrateProblem(*worker_, SimulatorKind::kIcarus,
                                                       DefaultLimits(SimulatorKind::kIcarus), *p))
               .first;
    EXPECT_TRUE(it->second.gradable) << it->second.note;
    SimulatorLimits limits =
        LimitsForProblem(DefaultLimits(SimulatorKind::kIcarus), it->second, std::nullopt);
    limits.stop_at_first_mismatch = stop_at_first_mismatch;
    return GradeDesign(*worker_, SimulatorKind::kIcarus, limits, *p, code, &it->second);
  }

  // `grade` run on a quiet machine, then with every core busy (four busy loops on the 2 vCPUs).
  static std::pair<Verdict, Verdict> QuietAndLoaded(const std::function<Verdict()>& grade) {
    Verdict quiet = grade();
    testing::RunShell(
        "for i in 1 2 3 4; do timeout 60 sh -c 'while :; do :; done' >/dev/null 2>&1 & done");
    Verdict loaded = grade();
    testing::RunShell("pkill -f \"while :; do :; done\" || true");
    return {std::move(quiet), std::move(loaded)};
  }

  static Dataset* dataset_;
  static SandboxWorker* worker_;
  std::map<std::string, Calibration> cal_;
};
Dataset* GradingTest::dataset_ = nullptr;
SandboxWorker* GradingTest::worker_ = nullptr;

const char* kAndHeader = "module TopModule(input a, input b, output out);\n";
const char* kDffHeader =
    "module TopModule(input clk, input reset, input [7:0] d, output logic [7:0] q);\n";

TEST_F(GradingTest, CorrectDesignPasses) {
  Verdict v =
      Grade("Bi01_and_gate", std::string(kAndHeader) + "  assign out = a & b;\nendmodule\n");
  EXPECT_TRUE(v.passed) << v.detail << v.log;
  EXPECT_EQ(v.category, '.');
  EXPECT_EQ(v.benchmark, '.');
  EXPECT_EQ(v.mismatches, 0);
  EXPECT_EQ(v.samples_checked, 800);
}

// A step the wall-clock backstop ends says something about the machine, not the design: it is
// run again, and when every attempt ends so the sample is '!' (not graded, never cached), not a
// 'T' the load produced. Here the backstop is made too short for any compile.
TEST_F(GradingTest, AWallClockBackstopIsTheMachinesFaultNeverAVerdict) {
  Grade("Bi01_and_gate", "");  // calibrated with the normal limits
  SimulatorLimits limits = DefaultLimits(SimulatorKind::kIcarus);
  limits.compile_wall_ms = 1;
  Verdict v = GradeDesign(
      *worker_, SimulatorKind::kIcarus, limits, *dataset_->Find("Bi01_and_gate"),
      std::string(kAndHeader) + "  assign out = a & b;\nendmodule\n", &cal_.at("Bi01_and_gate"));
  EXPECT_EQ(v.category, '!') << v.detail;
  EXPECT_FALSE(v.passed);
  EXPECT_FALSE(v.cacheable);
  EXPECT_NE(v.detail.find("the machine is too loaded"), std::string::npos) << v.detail;
  EXPECT_NE(v.detail.find("3 times"), std::string::npos) << v.detail;
}

// A design whose elaboration never ends (a generate loop counting the wrong way: RTLLM's
// multi_pipe_4bit mutated) is ended by the compiler's CPU time, not by the wall clock: the same
// 'T' on a quiet machine and on one whose every core is busy (formerly the wall clock ended it
// first under load: '!').
TEST_F(GradingTest, ARunawayElaborationEndsByCpuTimeWhateverTheLoad) {
  Grade("Bi01_and_gate", "");
  SimulatorLimits limits = DefaultLimits(SimulatorKind::kIcarus);
  limits.compile_timeout_ms = 2000;
  const std::string runaway = std::string(kAndHeader) +
                              "  wire [7:0] w [0:3];\n  genvar i;\n"
                              "  for (i = 0; i < 4; i = i - 1) begin : g\n"
                              "    assign w[i] = 8'd0;\n  end\n"
                              "  assign out = a & b;\nendmodule\n";
  auto grade = [&] {
    return GradeDesign(*worker_, SimulatorKind::kIcarus, limits, *dataset_->Find("Bi01_and_gate"),
                       runaway, &cal_.at("Bi01_and_gate"));
  };
  auto [quiet, loaded] = QuietAndLoaded(grade);
  EXPECT_EQ(quiet.category, 'T') << quiet.detail;
  EXPECT_NE(quiet.detail.find("compilation exceeded its CPU-time limit"), std::string::npos)
      << quiet.detail;
  EXPECT_TRUE(quiet.cacheable);
  EXPECT_EQ(loaded.category, quiet.category) << loaded.detail;
}

// A macro that expands itself grows Icarus's preprocessor without end. Under the compile step's
// memory it raced the CPU limit and the machine's memory (L quiet, T or C loaded: a CI run saw
// both); preprocessing's own small address space ends it by ivlpp's "ran out of memory" in a
// fraction of a second, the same L on a quiet machine and on one whose every core is busy.
TEST_F(GradingTest, ASelfExpandingMacroEndsByItsAddressSpaceWhateverTheLoad) {
  Grade("Bi01_and_gate", "");
  const std::string macro =
      "`define A `A\n" + std::string(kAndHeader) + "  assign out = `A;\nendmodule\n";
  auto grade = [&] { return Grade("Bi01_and_gate", macro); };
  auto [quiet, loaded] = QuietAndLoaded(grade);
  EXPECT_EQ(quiet.category, 'L') << quiet.detail;
  EXPECT_NE(quiet.detail.find("preprocessing ran out of memory"), std::string::npos)
      << quiet.detail;
  EXPECT_TRUE(quiet.cacheable);
  EXPECT_EQ(loaded.category, quiet.category) << loaded.detail;
}

// Stopping at the first mismatch changes the count, never pass/fail or the letter.
TEST_F(GradingTest, StoppingAtTheFirstMismatchKeepsVerdictAndLetter) {
  const std::string right = std::string(kAndHeader) + "  assign out = a & b;\nendmodule\n";
  const std::string wrong = std::string(kAndHeader) + "  assign out = a | b;\nendmodule\n";
  Verdict full = Grade("Bi01_and_gate", wrong, false);
  Verdict early = Grade("Bi01_and_gate", wrong, true);
  EXPECT_FALSE(early.passed);
  EXPECT_EQ(early.category, full.category);
  EXPECT_EQ(early.benchmark, full.benchmark);
  EXPECT_GT(full.mismatches, 1);
  EXPECT_FALSE(full.mismatches_lower_bound);
  EXPECT_EQ(early.mismatches, 1);
  EXPECT_TRUE(early.mismatches_lower_bound);
  EXPECT_LT(early.samples_checked, full.samples_checked);
  EXPECT_NE(early.detail.find("stopped at the first"), std::string::npos) << early.detail;
  // A passing design has no mismatch to stop at: the same full run.
  Verdict pass = Grade("Bi01_and_gate", right, true);
  EXPECT_TRUE(pass.passed) << pass.detail;
  EXPECT_EQ(pass.samples_checked, 800);
  EXPECT_FALSE(pass.mismatches_lower_bound);
}

TEST_F(GradingTest, CompileCategories) {
  struct Case {
    std::string problem, code;
    char expect;
  } cases[] = {
      {"Bi01_and_gate", std::string(kAndHeader) + "  assign out = a & b\nendmodule\n", 'S'},
      {"Bi01_and_gate", std::string(kAndHeader) + "  assign out = a & 0'b1;\nendmodule\n", '0'},
      {"Bi01_and_gate", std::string(kAndHeader) + "  always @(*) out = a & b;\nendmodule\n", 'w'},
      {"Bi01_and_gate", std::string(kAndHeader) + "  and_cell u(a, b, out);\nendmodule\n", 'm'},
      {"Bi07_dff8_sync_reset",
       "module TopModule(input reset, input [7:0] d, output logic [7:0] q);\n"
       "  always @(posedge clk) q <= reset ? 0 : d;\nendmodule\n",
       'c'},
      {"Bi01_and_gate", std::string(kAndHeader) + "  assign out = a & c;\nendmodule\n", 'p'},
      {"Bi11_fsm_detect101",
       "module TopModule(input clk, input reset, input x, output z);\n"
       "  typedef enum logic [1:0] {A, B, C, D} s_t;\n  s_t s;\n"
       "  always @(posedge clk) if (reset) s = A; else s = 1;\n  assign z = s == D;\nendmodule\n",
       'e'},
      {"Bi01_and_gate", "", 'm'},  // nothing extracted: the testbench's TopModule is missing
  };
  for (const auto& c : cases) {
    Verdict v = Grade(c.problem, c.code);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.category, c.expect) << c.code << "\n" << v.detail << "\n" << v.log;
  }
}

TEST_F(GradingTest, RuntimeCategories) {
  Verdict wrong =
      Grade("Bi01_and_gate", std::string(kAndHeader) + "  assign out = a | b;\nendmodule\n");
  EXPECT_EQ(wrong.category, 'R');
  EXPECT_GT(wrong.mismatches, 0);
  // An asynchronous reset where a synchronous one is asked for: the benchmark's 'r'.
  Verdict async =
      Grade("Bi07_dff8_sync_reset",
            std::string(kDffHeader) +
                "  always @(posedge clk, posedge reset) q <= reset ? 8'd0 : d;\nendmodule\n");
  EXPECT_EQ(async.category, 'r') << async.detail;
  // An always block that can never trigger.
  Verdict never = Grade("Bi01_and_gate",
                        "module TopModule(input a, input b, output logic out);\n"
                        "  always @(*) out = 1'b1;\nendmodule\n");
  EXPECT_EQ(never.category, 'n') << never.detail << never.log;
  Verdict hang = Grade("Bi01_and_gate", std::string(kAndHeader) +
                                            "  assign out = a & b;\n  always #0 ;\nendmodule\n");
  EXPECT_FALSE(hang.passed);
}

TEST_F(GradingTest, ExtractionFailuresAreGradedNotDropped) {
  // [BEGIN] without [DONE]: the benchmark extracts nothing; the sample then fails as the
  // benchmark's does, with TopModule missing.
  Verdict v = Grade("Bi01_and_gate", "\n\n");
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.category, 'm');
  EXPECT_EQ(v.benchmark, 'm');
}

}  // namespace
}  // namespace evald
