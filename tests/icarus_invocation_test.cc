// evald runs Icarus's ivlpp and ivl itself (harness/icarus_invocation.h); the installed driver,
// `iverilog`, is the authority on how. Against it, outside the sandbox, in the same folder:
// the files it writes (IVERILOG_ICONFIG keeps them), and for every problem's reference and
// every hostile design, what the two ways produce - the preprocessed text, the compiled program
// (equal but for the addresses ivl prints as labels), the messages and the exit status.
#include "harness/icarus_invocation.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "base/file_io.h"
#include "base/py_text.h"
#include "datasets/dataset.h"
#include "harness/problem_bench.h"
#include "harness/simulator.h"
#include "test_support.h"

namespace evald {
namespace {

namespace fs = std::filesystem;

// A file's text, or "" when it is missing.
std::string Text(const std::string& path) {
  auto text = ReadFileBounded(path);
  return text.ok() ? *text : std::string();
}

// Runs argv in `dir` (stdin from `stdin_file` there, else /dev/null) under the address space
// the production step has (a self-expanding macro ends by running out of it, not at the
// deadline), messages merged, with a deadline: a hostile design may elaborate for long.
testing::ShellResult RunIn(const std::string& dir, const std::vector<std::string>& argv,
                           uint64_t address_space, const std::string& stdin_file = "",
                           const std::string& environment = "") {
  std::string cmd = "cd " + testing::ShellQuote(dir) + " && ulimit -v " +
                    std::to_string(address_space >> 10) + " && " + environment + " timeout 20";
  for (const std::string& a : argv) cmd += " " + testing::ShellQuote(a);
  cmd += stdin_file.empty() ? " < /dev/null" : " < " + testing::ShellQuote(stdin_file);
  return testing::RunShell(cmd + " 2>&1");
}

const uint64_t kCompileAddressSpace = DefaultLimits(SimulatorKind::kIcarus).compile_address_space;

void WriteFiles(const std::string& dir, const sandbox::JobRequest& job) {
  for (const auto& [name, text] : job.files())
    ASSERT_TRUE(WriteFileAtomic(dir + "/" + name, text).ok());
}

std::vector<std::string> Argv(const sandbox::StepSpec& step) {
  return {step.argv().begin(), step.argv().end()};
}

// ivl labels objects by their addresses (S_0x55..., L_0x55...), which differ between runs.
std::string WithoutAddresses(const std::string& program) {
  static const std::regex address("0x[0-9a-f]+");
  return std::regex_replace(program, address, "0x");
}

struct Outcome {
  int exit_code = -1;
  std::string messages;
  std::string output;  // the preprocessed text or the compiled program, as written
};

// The driver's `iverilog -E -g2012 -o <out> <design>`, and the same through evald's job.
Outcome DriverPreprocess(const std::string& dir, const std::string& design) {
  auto r =
      RunIn(dir, {"iverilog", "-E", "-g2012", "-o", "driver.pp", design}, kPreprocessAddressSpace);
  return {r.exit_code, r.output, Text(dir + "/driver.pp")};
}

Outcome EvaldPreprocess(const std::string& dir, const sandbox::JobRequest& job) {
  const sandbox::StepSpec& step = job.steps(0);
  auto r = RunIn(dir, Argv(step), step.address_space_bytes(), step.stdin_file());
  if (r.exit_code != 0) r.output += kIcarusPreprocessFailed;  // as the grader adds it
  return {r.exit_code, r.output, Text(dir + "/" + job.collect(0))};
}

// The benchmark's compile command line through the driver, and evald's compile steps (stopping
// at a failed one, as the job does).
Outcome DriverCompile(const std::string& dir, const HardenedBench& bench, const JobFiles& f) {
  std::vector<std::string> argv = {"iverilog", "-Wall",   "-Winfloop", "-Wno-timescale", "-g2012",
                                   "-s",       bench.top, "-o",        "driver.vvp"};
  if (!bench.default_timescale.empty()) {
    EXPECT_TRUE(
        WriteFileAtomic(dir + "/ts.f", "+timescale+" + bench.default_timescale + "\n").ok());
    argv.insert(argv.end(), {"-c", "ts.f"});
  }
  argv.insert(argv.end(), {f.design, f.testbench, f.reference});
  auto r = RunIn(dir, argv, kCompileAddressSpace);
  return {r.exit_code, r.output, Text(dir + "/driver.vvp")};
}

Outcome EvaldCompile(const std::string& dir, const sandbox::JobRequest& job, const JobFiles& f) {
  Outcome o;
  o.exit_code = 0;
  for (int i = 0; i < CompileStepCount(SimulatorKind::kIcarus); ++i) {
    if (o.exit_code != 0 && !job.steps(i).runs_after_failure()) break;
    const sandbox::StepSpec& step = job.steps(i);
    auto r = RunIn(dir, Argv(step), step.address_space_bytes(), step.stdin_file());
    o.messages += r.output;
    if (o.exit_code == 0) o.exit_code = r.exit_code;
  }
  o.output = Text(dir + "/" + f.binary);
  return o;
}

class IcarusInvocation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string root =
        testing::HaveSharedVerilogEval() ? testing::SharedVerilogEval() : testing::BuiltinDataset();
    auto ds = Dataset::Load(root, Task::kSpecToRtl);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    dataset_ = new Dataset(std::move(*ds));
  }
  static void TearDownTestSuite() { delete dataset_; }

  // The job evald runs for `design` on `problem`, its files written into `dir`.
  static sandbox::JobRequest CompileJob(const std::string& dir, const Problem& problem,
                                        const std::string& design, const std::string& nonce,
                                        HardenedBench* bench) {
    auto hardened = HardenFor(problem, nonce, true);
    EXPECT_TRUE(hardened.ok()) << hardened.status().ToString();
    *bench = *hardened;
    auto job = BuildSimulationJob(SimulatorKind::kIcarus, *bench, design, nonce, "00",
                                  DefaultLimits(SimulatorKind::kIcarus));
    WriteFiles(dir, job);
    return job;
  }

  static Dataset* dataset_;
};
Dataset* IcarusInvocation::dataset_ = nullptr;

// What was checked against one major version's driver is not assumed of another's.
TEST(IcarusVersion, OnlyTheReproducedMajorVersionIsRun) {
  EXPECT_TRUE(IcarusVersionSupported("Icarus Verilog version 11.0 (stable) ()"));
  EXPECT_FALSE(IcarusVersionSupported("Icarus Verilog version 12.0 (stable) (s20221226-238-g)"));
  EXPECT_FALSE(IcarusVersionSupported("Icarus Verilog version 1.0"));
  EXPECT_FALSE(IcarusVersionSupported(""));
  auto installed = testing::RunShell("iverilog -V 2>&1 | head -1");
  EXPECT_TRUE(IcarusVersionSupported(installed.output)) << installed.output;
}

TEST_F(IcarusInvocation, TheDriversOwnFilesAreWrittenAlike) {
  const Problem* with_timescale = nullptr;
  const Problem* without = nullptr;
  for (const Problem& p : dataset_->problems()) {
    auto bench = HardenFor(p, "n0", true);
    ASSERT_TRUE(bench.ok());
    (bench->default_timescale.empty() ? without : with_timescale) = &p;
  }
  for (const Problem* problem : {without, with_timescale}) {
    if (problem == nullptr) continue;
    SCOPED_TRACE(problem->name);
    testing::ScratchDir dir("ivl-files");
    HardenedBench bench;
    const std::string nonce = "feed01";
    auto job = CompileJob(dir.path(), *problem, ReferenceDesign(*problem), nonce, &bench);
    const JobFiles f = JobFileNames(nonce);
    fs::create_directories(dir.path() + "/kept");
    std::vector<std::string> argv = {"iverilog", "-Wall",   "-Winfloop", "-Wno-timescale", "-g2012",
                                     "-s",       bench.top, "-o",        f.binary};
    if (!bench.default_timescale.empty()) {
      ASSERT_TRUE(
          WriteFileAtomic(dir.path() + "/ts.f", "+timescale+" + bench.default_timescale + "\n")
              .ok());
      argv.insert(argv.end(), {"-c", "ts.f"});
    }
    argv.insert(argv.end(), {f.design, f.testbench, f.reference});
    auto r =
        RunIn(dir.path(), argv, kCompileAddressSpace, "",
              "IVERILOG_ICONFIG=" + dir.path() + "/kept/config TMPDIR=" + dir.path() + "/kept");
    // The driver's files: config, defines (D:...), source list, macros (ivrli...).
    std::string config = Text(dir.path() + "/kept/config");
    std::string defines_path, sources, macros_path;
    for (const auto& entry : fs::directory_iterator(dir.path() + "/kept")) {
      const std::string path = entry.path().string(), name = entry.path().filename().string();
      const std::string text = Text(path);
      if (py::StartsWith(name, "ivrli")) macros_path = path;
      if (py::StartsWith(name, "ivrlg")) {
        if (py::StartsWith(text, "D:"))
          defines_path = path;
        else
          sources = text;
      }
    }
    ASSERT_FALSE(defines_path.empty());
    ASSERT_FALSE(macros_path.empty());
    const IcarusFiles ivl = IcarusFileNames(nonce);
    EXPECT_EQ(Text(defines_path), job.files().at(ivl.defines));
    EXPECT_EQ(sources, job.files().at(ivl.sources));
    config = py::ReplaceAll(config, defines_path, ivl.defines);
    config = py::ReplaceAll(config, macros_path, ivl.macros);
    EXPECT_EQ(config, job.files().at(ivl.config));
    EXPECT_EQ(bench.default_timescale.empty(), config.find("timescale:") == std::string::npos);
  }
}

TEST_F(IcarusInvocation, EveryReferenceCompilesToTheDriversProgram) {
  int compared = 0, compiled = 0;
  for (const Problem& problem : dataset_->problems()) {
    SCOPED_TRACE(problem.name);
    testing::ScratchDir dir("ivl-ref");
    const std::string design = ReferenceDesign(problem);
    const std::string nonce = RandomHex(4);
    HardenedBench bench;
    auto job = CompileJob(dir.path(), problem, design, nonce, &bench);
    const JobFiles f = JobFileNames(nonce);
    Outcome driver = DriverCompile(dir.path(), bench, f);
    Outcome evald = EvaldCompile(dir.path(), job, f);
    // A few references do not compile under Icarus (their problems are ungradable with it):
    // they fail alike.
    EXPECT_EQ(evald.exit_code, driver.exit_code) << evald.messages;
    EXPECT_EQ(evald.messages, driver.messages);
    if (driver.exit_code == 0) {
      ASSERT_FALSE(driver.output.empty());
      EXPECT_EQ(WithoutAddresses(evald.output), WithoutAddresses(driver.output));
      ++compiled;
    }

    auto pp = BuildPreprocessJob(SimulatorKind::kIcarus, design, nonce,
                                 DefaultLimits(SimulatorKind::kIcarus));
    WriteFiles(dir.path(), pp);
    Outcome driver_pp = DriverPreprocess(dir.path(), f.design);
    Outcome evald_pp = EvaldPreprocess(dir.path(), pp);
    EXPECT_EQ(evald_pp.exit_code, driver_pp.exit_code);
    EXPECT_EQ(evald_pp.messages, driver_pp.messages);
    EXPECT_EQ(evald_pp.output, driver_pp.output);
    ++compared;
  }
  EXPECT_GE(compared, 10);
  EXPECT_GE(compiled, compared * 9 / 10);
}

// Designs written to break things: the messages, exit status and output of a failure must be
// the driver's too (the benchmark's letter is read from them).
TEST_F(IcarusInvocation, HostileDesignsFailAsUnderTheDriver) {
  const Problem& problem = dataset_->problems().front();
  int compared = 0, failed = 0;
  for (const auto& entry : fs::directory_iterator(testing::SourceDir() + "/tests/hostile")) {
    if (entry.path().extension() != ".sv") continue;
    SCOPED_TRACE(entry.path().filename().string());
    const std::string design = Text(entry.path().string());
    testing::ScratchDir dir("ivl-hostile");
    const std::string nonce = RandomHex(4);
    auto pp = BuildPreprocessJob(SimulatorKind::kIcarus, design, nonce,
                                 DefaultLimits(SimulatorKind::kIcarus));
    WriteFiles(dir.path(), pp);
    const JobFiles f = JobFileNames(nonce);
    Outcome driver_pp = DriverPreprocess(dir.path(), f.design);
    Outcome evald_pp = EvaldPreprocess(dir.path(), pp);
    EXPECT_EQ(evald_pp.exit_code, driver_pp.exit_code);
    EXPECT_EQ(evald_pp.messages, driver_pp.messages);
    if (driver_pp.exit_code == 0) {
      EXPECT_EQ(evald_pp.output, driver_pp.output);
    }

    HardenedBench bench;
    auto job = CompileJob(dir.path(), problem, design, nonce, &bench);
    Outcome driver = DriverCompile(dir.path(), bench, f);
    Outcome evald = EvaldCompile(dir.path(), job, f);
    // The driver's status is ivl's (the end of its pipe); evald's compile fails when either did.
    EXPECT_EQ(evald.exit_code != 0, driver.exit_code != 0) << evald.messages;
    EXPECT_EQ(evald.messages, driver.messages);
    if (driver.exit_code == 0) {
      EXPECT_EQ(WithoutAddresses(evald.output), WithoutAddresses(driver.output));
    }
    failed += driver.exit_code != 0 || driver_pp.exit_code != 0;
    ++compared;
  }
  EXPECT_GE(compared, 20);
  EXPECT_GE(failed, 5);  // failures are compared, not only successes
}

}  // namespace
}  // namespace evald
