// The hostile corpus (tests/hostile/*.sv): designs that attack the grader or the host. Each is
// graded as a sample of the built-in Bi01_and_gate problem; each must fail with one of the
// categories its `// expect:` line names, leave no trace on the host, and leave the sandbox
// able to grade the next sample correctly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/file_io.h"
#include "base/hash.h"
#include "base/py_text.h"
#include "datasets/dataset.h"
#include "harness/calibration.h"
#include "harness/failure_category.h"
#include "test_support.h"

namespace evald {
namespace {

struct HostileCase {
  std::string name;
  std::string code;
  std::set<char> expect;
  std::set<std::string> simulators = {"iverilog"};
  std::string verilator_proof;  // text the attack prints when it really ran under Verilator
};

std::vector<HostileCase> LoadCorpus(const std::string& marker, const std::string& secret) {
  std::vector<HostileCase> out;
  std::string dir = testing::SourceDir() + "/tests/hostile";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    HostileCase c;
    c.name = path.filename().string();
    auto text = ReadFileBounded(path.string());
    EXPECT_TRUE(text.ok());
    c.code = py::ReplaceAll(
        py::ReplaceAll(py::ReplaceAll(*text, "@MARKER@", marker), "@SECRET@", secret), "@SOURCE@",
        testing::SourceDir());
    for (auto line : py::SplitLines(c.code)) {
      if (py::StartsWith(line, "// expect:")) {
        for (char ch : line.substr(10))
          if (ch != ' ') c.expect.insert(ch);
      }
      if (py::StartsWith(line, "// ran-under-verilator:"))
        c.verilator_proof = std::string(py::Strip(line.substr(23)));
      if (py::StartsWith(line, "// simulators:")) {
        c.simulators.clear();
        std::istringstream ss{std::string(line.substr(14))};
        std::string s;
        while (ss >> s) c.simulators.insert(s);
      }
    }
    EXPECT_FALSE(c.expect.empty()) << c.name << " has no // expect: line";
    out.push_back(std::move(c));
  }
  return out;
}

class HostileCorpus : public ::testing::TestWithParam<SimulatorKind> {};

TEST_P(HostileCorpus, ContainedAndGradedAsFailure) {
  const SimulatorKind sim = GetParam();
  auto ds = Dataset::Load(testing::BuiltinDataset(), Task::kSpecToRtl);
  ASSERT_TRUE(ds.ok());
  const Problem* problem = ds->Find("Bi01_and_gate");
  ASSERT_NE(problem, nullptr);

  const std::string tag = RandomHex(6);
  const std::string marker = "/tmp/evald-hostile-" + tag;
  const std::string secret_path = "/tmp/evald-secret-" + tag;
  const std::string secret = "SECRET-" + RandomHex(8);
  ASSERT_TRUE(WriteFileAtomic(secret_path, secret + "\n").ok());

  SandboxWorker worker(SandboxOptions{}, 0);
  ASSERT_TRUE(worker.Start().ok());
  if (sim == SimulatorKind::kVerilator && !worker.layers().ContainsNativeCode())
    GTEST_SKIP() << "Verilator is refused in this sandbox: " << worker.layers().Describe();
  const SimulatorLimits base = DefaultLimits(sim);
  Calibration cal = CalibrateProblem(worker, sim, base, *problem);
  ASSERT_TRUE(cal.gradable) << cal.note;
  SimulatorLimits limits = LimitsForProblem(base, cal, std::nullopt);

  int ran = 0;
  for (const auto& c : LoadCorpus(marker, secret_path)) {
    if (!c.simulators.count(std::string(SimulatorName(sim)))) continue;
    ++ran;
    Verdict v = GradeDesign(worker, sim, limits, *problem, c.code, &cal);
    std::printf("  %-24s %c  %s\n", c.name.c_str(), v.category, v.detail.c_str());
    if (!c.expect.count('.')) {  // '.': a right design that attacks the grader, not the verdict
      EXPECT_FALSE(v.passed) << c.name;
    }
    EXPECT_TRUE(c.expect.count(v.category))
        << c.name << ": got '" << v.category << "' (" << v.detail << ")\n"
        << v.log.substr(0, 2000);
    if (sim == SimulatorKind::kVerilator && !c.verilator_proof.empty() &&
        v.category != category::kIntegrity) {
      // The attack really executed (inside the sandbox): containment, not luck, kept it in.
      // (Refused by the static check, it never runs; tests/sandbox_test covers containment.)
      EXPECT_NE(v.log.find(c.verilator_proof), std::string::npos) << c.name << "\n" << v.log;
    }
    EXPECT_EQ(v.log.find(secret), std::string::npos) << c.name << " leaked a host file";
    EXPECT_EQ(v.log.find("root:x:0:0"), std::string::npos) << c.name << " leaked /etc/passwd";
    for (const char* suffix : {"", ".2", ".sys", ".c", ".dpi", ".sc"})
      EXPECT_FALSE(std::filesystem::exists(marker + suffix))
          << c.name << " wrote " << marker << suffix;
    EXPECT_FALSE(std::filesystem::exists(testing::SourceDir() + "/PWNED")) << c.name;
  }
  EXPECT_GT(ran, 0);

  // The host and later samples are unaffected: a correct design still passes.
  Verdict good = GradeDesign(worker, sim, limits, *problem,
                             "module TopModule(input a, input b, output out);\n"
                             "  assign out = a & b;\nendmodule\n",
                             &cal);
  EXPECT_TRUE(good.passed) << good.detail << "\n" << good.log;
  ::unlink(secret_path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Simulators, HostileCorpus,
                         ::testing::Values(SimulatorKind::kIcarus, SimulatorKind::kVerilator),
                         [](const auto& info) { return std::string(SimulatorName(info.param)); });

}  // namespace
}  // namespace evald
