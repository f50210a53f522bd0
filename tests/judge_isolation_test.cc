// What decides a verdict is out of a design's reach even where the static checks would not
// stop it: these designs are compiled and simulated *without* the integrity and interface
// checks (as if those had a hole), through the same hardened testbench, sandbox job and
// classification as any sample. Each must still fail. docs/verdicts.md ("What would have to
// break for a forgery") states the same.
#include <gtest/gtest.h>

#include "base/hash.h"
#include "base/py_text.h"
#include "datasets/dataset.h"
#include "harness/calibration.h"
#include "harness/failure_category.h"
#include "test_support.h"

namespace evald {
namespace {

class JudgeIsolation : public ::testing::TestWithParam<SimulatorKind> {
 protected:
  void SetUp() override {
    auto ds = Dataset::Load(testing::BuiltinDataset(), Task::kSpecToRtl);
    ASSERT_TRUE(ds.ok());
    dataset_ = std::move(*ds);
    problem_ = dataset_.Find("Bi01_and_gate");
    ASSERT_NE(problem_, nullptr);
    worker_ = std::make_unique<SandboxWorker>(SandboxOptions{}, 0);
    ASSERT_TRUE(worker_->Start().ok());
    if (!worker_->layers().fs_view || !worker_->layers().proc)
      GTEST_SKIP() << "needs the sandbox's own filesystem view: " << worker_->layers().Describe();
    if (GetParam() == SimulatorKind::kVerilator && !worker_->layers().ContainsNativeCode())
      GTEST_SKIP() << worker_->layers().Describe();
    cal_ = CalibrateProblem(*worker_, GetParam(), DefaultLimits(GetParam()), *problem_);
    ASSERT_TRUE(cal_.gradable) << cal_.note;
    limits_ = LimitsForProblem(DefaultLimits(GetParam()), cal_, std::nullopt);
  }

  // Compiles and simulates `design` as it is (no integrity or interface check, no
  // preprocessing) against the hardened testbench, and classifies the run as any sample's.
  // `show_proc`: the simulation step keeps /proc (the sandbox layer this test takes away).
  struct Outcome {
    Verdict verdict;
    std::string secret;  // the run's result-tag secret
  };
  // `unisolated`: the design wrapper connects the design to the testbench's nets directly, as an
  // unhardened testbench does (to show what the isolation stops).
  Outcome Bypassing(const std::string& design, bool show_proc = false, bool unisolated = false) {
    DesignRun run;
    run.limits = limits_;
    run.nonce = RandomHex(8);
    const std::string secret = RandomHex(kResultSecretLength / 2);
    auto bench = HardenTestbench(problem_->testbench, problem_->reference, run.nonce);
    EXPECT_TRUE(bench.ok()) << bench.status().ToString();
    run.tag = ResultTag(secret);
    if (unisolated) {
      std::string& ref = bench->reference;
      const size_t dut = ref.find("TopModule design_" + run.nonce);
      EXPECT_NE(dut, std::string::npos);
      std::string inputs = ref.substr(dut);
      for (const char* port : {"a", "b"})
        inputs = py::ReplaceAll(inputs, "." + std::string(port) + "(c_" + run.nonce + "_" + port,
                                "." + std::string(port) + "(" + port);
      ref = ref.substr(0, dut) + inputs;
    }
    auto job = BuildSimulationJob(GetParam(), *bench, design, run.nonce, secret, limits_);
    if (show_proc) job.mutable_steps(CompileStepCount(GetParam()))->set_hide_proc(false);
    auto response = worker_->Run(job);
    EXPECT_TRUE(response.ok());
    if (response.ok()) run.response = std::move(*response);
    return {ClassifyRun(run, GetParam(), design, &cal_), secret};
  }

  Dataset dataset_;
  const Problem* problem_ = nullptr;
  std::unique_ptr<SandboxWorker> worker_;
  Calibration cal_;
  SimulatorLimits limits_;
};

// A wrong design (out = 0) that takes the stimulus over through its ports: with the nets shared
// the reference would compute from the same values and agree.
TEST_P(JudgeIsolation, NothingDoneToItsPortsReachesTheStimulus) {
  const std::string outputs =
      "module TopModule(output a, output b, output out);\n"
      "  assign a = 1'b0;\n  assign b = 1'b0;\n  assign out = 1'b0;\nendmodule\n";
  Verdict v = Bypassing(outputs).verdict;
  EXPECT_FALSE(v.passed) << v.detail << "\n" << v.log;
  if (GetParam() == SimulatorKind::kIcarus) {
    // Forced to x, every comparison of the testbench would be skipped (x matches anything).
    Verdict forced = Bypassing(
                         "module TopModule(input a, input b, output out);\n"
                         "  initial begin force a = 1'bx; force b = 1'bx; end\n  assign out = "
                         "1'bx;\nendmodule\n")
                         .verdict;
    EXPECT_FALSE(forced.passed) << forced.detail << "\n" << forced.log;
    EXPECT_EQ(forced.category, category::kRuntimeMismatch) << forced.detail;
    // Connected to the testbench's nets directly (Icarus merges a port with its net), the same
    // design passes: what the isolation stops.
    Verdict forced_shared = Bypassing(
                                "module TopModule(input a, input b, output out);\n"
                                "  initial begin force a = 1'bx; force b = 1'bx; end\n  assign out "
                                "= 1'bx;\nendmodule\n",
                                false, true)
                                .verdict;
    EXPECT_TRUE(forced_shared.passed) << forced_shared.detail << "\n" << forced_shared.log;
  }
}

// The design searches everything it could read if file I/O got through: the process's command
// line and environment under /proc, and its own compiled binary (whose name it learns from %m),
// for the secret that tags the result line, then prints a tagged passing line with what it
// found to both streams.
std::string SecretHunter(SimulatorKind sim) {
  const std::string binary = sim == SimulatorKind::kIcarus ? "\"sim_\"" : "\"obj/sim_\"";
  return R"(module TopModule(input a, input b, output out);
  assign out = 1'b0;
  reg [8*32-1:0] found;
  reg [8*16-1:0] pat;  // the pattern, as a string in a vector (its first byte highest)
  integer patlen, hits = 0;
  // The 32 bytes after the first `pat` in file `path`.
  task scan(input [8*64-1:0] path);
    integer fd, c, matched, k;
    begin
      fd = $fopen(path, "rb");
      if (fd != 0) begin
        matched = 0;
        c = $fgetc(fd);
        while (c != -1 && hits == 0) begin
          if (c == pat[8*(patlen-1-matched) +: 8]) matched = matched + 1;
          else if (c == pat[8*(patlen-1) +: 8]) matched = 1;
          else matched = 0;
          if (matched == patlen) begin
            for (k = 0; k < 32; k = k + 1) begin
              c = $fgetc(fd);
              found = {found[8*31-1:0], c[7:0]};
            end
            hits = 1;
          end
          if (hits == 0) c = $fgetc(fd);
        end
        $fclose(fd);
      end
    end
  endtask
  reg [8*128-1:0] me;
  reg [8*16-1:0] nonce;
  integer i, k, fd_out, fd_err;
  initial begin
    // The instance path holds the run's nonce: tb_<nonce>. ...
    $sformat(me, "%m");
    for (i = 127; i >= 18; i = i - 1)
      if (me[8*i +: 8] == "t" && me[8*(i-1) +: 8] == "b" && me[8*(i-2) +: 8] == "_")
        for (k = 0; k < 16; k = k + 1) nonce = {nonce[8*15-1:0], me[8*(i-3-k) +: 8]};
    // Patterns built at run time, so that the design's own literals do not match in its binary.
    pat = "Xvald_tag=";
    pat[8*9 +: 8] = "e";
    patlen = 10;
    scan("/proc/self/cmdline");
    scan("/proc/self/environ");
    scan("/dev/fd/0");
    pat = "Xevald-";
    pat[8*6 +: 8] = "[";
    patlen = 7;
    scan({)" +
         binary + R"(, nonce});
    if (hits != 0) begin
      $display("FOUND %0s", found);
      $fdisplay(32'h8000_0002, "[evald-%0s] Mismatches: 0 in 800 samples", found);
      // Closed, the testbench's own result line would come out nowhere (neither simulator lets
      // a design close them: Icarus refuses, Verilator ignores it).
      fd_out = 32'h8000_0001;
      fd_err = 32'h8000_0002;
      $fclose(fd_out);
      $fclose(fd_err);
    end else begin
      $display("NOTHING FOUND");
    end
  end
endmodule
)";
}

TEST_P(JudgeIsolation, ADesignThatReadsFilesFindsNoSecret) {
  Outcome o = Bypassing(SecretHunter(GetParam()));
  EXPECT_FALSE(o.verdict.passed) << o.verdict.detail << "\n" << o.verdict.log;
  EXPECT_EQ(o.verdict.log.find(o.secret), std::string::npos) << o.verdict.log;
  // Its binary holds only the testbench's format ("[evald-%0s] ..."), and the line it prints
  // with that is no tag: a result line the testbench did not print.
  EXPECT_NE(o.verdict.log.find("FOUND %0s]"), std::string::npos) << o.verdict.log;
  EXPECT_EQ(o.verdict.category, category::kIntegrity) << o.verdict.detail;
}

// The same design where the simulation can see /proc: it reads the secret from its command line.
// That is what hiding /proc takes away (the test shows the hunter is real); even then its
// forged line stands beside the testbench's own, which every normal end prints, and exactly one
// tagged line is accepted.
TEST_P(JudgeIsolation, WithProcVisibleTheHunterFindsTheSecretAndStillFails) {
  Outcome o = Bypassing(SecretHunter(GetParam()), /*show_proc=*/true);
  EXPECT_NE(o.verdict.log.find("FOUND " + o.secret), std::string::npos) << o.verdict.log;
  EXPECT_FALSE(o.verdict.passed) << o.verdict.detail;
  EXPECT_EQ(o.verdict.category, category::kIntegrity) << o.verdict.detail;
}

INSTANTIATE_TEST_SUITE_P(Simulators, JudgeIsolation,
                         ::testing::Values(SimulatorKind::kIcarus, SimulatorKind::kVerilator),
                         [](const auto& info) { return std::string(SimulatorName(info.param)); });

}  // namespace
}  // namespace evald
