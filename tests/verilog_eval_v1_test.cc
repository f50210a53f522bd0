// VerilogEval v1 (../shared/verilog-eval-v1) graded by evald: both problem sets load in
// verilog-eval v2's shape; every reference calibrates against its own testbench; upstream's own
// harness, run on its example samples, passes and fails what evald does; a completion that prints
// the result line itself gains nothing.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>

#include "base/file_io.h"
#include "base/hash.h"
#include "base/py_text.h"
#include "datasets/dataset.h"
#include "datasets/verilog_eval_v1.h"
#include "evald/proto/eval.pb.h"
#include "evald/runs/evaluation.h"
#include "test_support.h"

namespace evald {
namespace {

std::string Checkout() {
  return std::string(EVALD_SHARED_DIR) + "/verilog-eval-v1";
}

class VerilogEvalV1 : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!IsVerilogEvalV1Checkout(Checkout())) GTEST_SKIP() << "no ../shared/verilog-eval-v1";
    scratch_.emplace("v1-test");
    dir_ = scratch_->path();
  }
  std::optional<testing::ScratchDir> scratch_;
  std::string dir_;
};

TEST_F(VerilogEvalV1, BothSetsLoadInTheShapeOfVerilogEvalV2) {
  for (auto [task, count] :
       {std::pair{Task::kVerilogEvalV1Human, 156u}, std::pair{Task::kVerilogEvalV1Machine, 143u}}) {
    auto ds = Dataset::Load(Checkout(), task);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    ASSERT_EQ(ds->problems().size(), count);
    for (const auto& p : ds->problems()) {
      EXPECT_TRUE(py::StartsWith(p.reference, "module RefModule")) << p.name;
      EXPECT_NE(p.testbench.find("RefModule good1"), std::string::npos) << p.name;
      EXPECT_NE(p.testbench.find("TopModule top_module1"), std::string::npos) << p.name;
      EXPECT_EQ(p.testbench.find("reference_module"), std::string::npos) << p.name;
      EXPECT_NE(p.interface.find("module TopModule"), std::string::npos) << p.name;
      // The prompt: the description, then upstream's header.
      EXPECT_NE(p.prompt.find("module top_module"), std::string::npos) << p.name;
    }
  }
  // Each set has its digest; loading again gives the same one.
  auto human = Dataset::Load(Checkout(), Task::kVerilogEvalV1Human);
  auto machine = Dataset::Load(Checkout(), Task::kVerilogEvalV1Machine);
  auto again = Dataset::Load(Checkout(), Task::kVerilogEvalV1Human);
  ASSERT_TRUE(human.ok() && machine.ok() && again.ok());
  EXPECT_EQ(BenchmarkName(human->task()), "verilog-eval-v1");
  EXPECT_NE(human->problems_digest(), machine->problems_digest());
  EXPECT_EQ(human->problems_digest(), again->problems_digest());
  // The layout decides the task when none is named; a v2 task on a v1 checkout is refused.
  EXPECT_EQ(*TaskForDataset(Checkout(), ""), Task::kVerilogEvalV1Human);
  EXPECT_EQ(*TaskForDataset(testing::BuiltinDataset(), ""), Task::kSpecToRtl);
  auto wrong = Dataset::Load(Checkout(), Task::kSpecToRtl);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().ToString().find("verilog-eval-v1-human"), std::string::npos);
}

// Every reference against its own testbench under Icarus: all but the two problems whose enum
// casts Icarus 11 cannot compile (as in v2), each named with its reason.
TEST_F(VerilogEvalV1, EveryReferenceCalibratesAsDocumented) {
  for (auto task : {Task::kVerilogEvalV1Human, Task::kVerilogEvalV1Machine}) {
    auto ds = Dataset::Load(Checkout(), task);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    EvalOptions opts;
    opts.resources.jobs = 2;
    auto report = CheckDataset(*ds, opts);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    std::set<std::string> ungradable;
    for (const auto& p : report->problems()) {
      if (p.gradable()) {
        EXPECT_GT(p.samples_checked(), 0) << p.problem();
      } else {
        ungradable.insert(p.problem());
        EXPECT_NE(p.note().find("cast operation is not yet supported"), std::string::npos)
            << p.problem() << ": " << p.note();
      }
    }
    const std::set<std::string> expected =
        task == Task::kVerilogEvalV1Human
            ? std::set<std::string>{"review2015_fancytimer", "review2015_fsm"}
            : std::set<std::string>{};
    EXPECT_EQ(ungradable, expected) << TaskName(task);
  }
}

TEST_F(VerilogEvalV1, ABrokenProblemIsRefusedByName) {
  auto no_ref =
      ConvertVerilogEvalV1Problem("p1", "module top_module(input a);\n",
                                  "module tb(); top_module top_module1(); endmodule", "Do it.");
  ASSERT_FALSE(no_ref.ok());
  EXPECT_NE(no_ref.status().ToString().find("reference_module"), std::string::npos);
  auto no_dut = ConvertVerilogEvalV1Problem(
      "p1", "module top_module(input a);\n",
      "module reference_module(input a); endmodule\nmodule tb(); endmodule", "Do it.");
  ASSERT_FALSE(no_dut.ok());
  EXPECT_FALSE(ConvertVerilogEvalV1Problem("../p", "", "", "").ok());
}

// The samples file's verdicts as upstream's harness gives them: task_id#index -> passed.
std::map<std::string, bool> UpstreamVerdicts(const std::string& problems,
                                             const std::string& samples) {
  std::map<std::string, bool> out;
  auto r = testing::RunShell("/usr/bin/python3 " + testing::SourceDir() +
                             "/tests/upstream/verilog_eval_v1_upstream.py " + Checkout() + " " +
                             problems + " " + samples);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (auto line : py::SplitLines(r.output)) {
    if (py::Strip(line).empty()) continue;
    const bool passed = line.find("\"passed\": true") != std::string_view::npos;
    const size_t id = line.find("\"task_id\": \"") + 12;
    const std::string task_id(line.substr(id, line.find('"', id) - id));
    const size_t ix = line.find("\"index\": ") + 9;
    out[task_id + "#" + std::string(line.substr(ix, line.find(',', ix) - ix))] = passed;
  }
  return out;
}

std::map<std::string, bool> EvaldVerdicts(const std::string& dataset, const std::string& samples,
                                          const std::string& json,
                                          v1::EvalReport* report = nullptr) {
  std::map<std::string, bool> out;
  auto r = testing::RunShell(std::string(EVALD_BINARY) + " eval --dataset " + dataset +
                             " --samples " + samples + " --json " + json + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  v1::EvalReport parsed;
  auto text = ReadFileBounded(json);
  EXPECT_TRUE(text.ok());
  if (text.ok()) {
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(*text, &parsed).ok());
  }
  for (const auto& s : parsed.samples())
    out[s.problem() + "#" + std::to_string(s.index())] = s.passed();
  if (report) *report = parsed;
  return out;
}

TEST_F(VerilogEvalV1, UpstreamsOwnHarnessAgreesOnItsExampleSamples) {
  const std::string problems = Checkout() + "/data/example/ExampleEval.jsonl";
  const std::string samples = Checkout() + "/data/example/ExampleSolution.jsonl";
  auto upstream = UpstreamVerdicts(problems, samples);
  v1::EvalReport report;
  auto mine = EvaldVerdicts(problems, samples, dir_ + "/report.json", &report);
  ASSERT_EQ(upstream.size(), 6u);
  EXPECT_EQ(mine, upstream);
  // Upstream's recorded results (ExampleSolution.jsonl_reference.jsonl): pass@1 0.5.
  int passed = 0;
  for (auto& [key, ok] : mine) passed += ok;
  EXPECT_EQ(passed, 3);
  EXPECT_EQ(report.task(), "verilog-eval-v1-human");
  EXPECT_EQ(report.benchmark().name(), "verilog-eval-v1");
  EXPECT_EQ(report.benchmark().version(), "1.0.0");
  EXPECT_EQ(report.benchmark().problems(), 3);
  EXPECT_EQ(report.benchmark().problems_sha256().size(), 64u);
  for (const auto& s : report.samples()) EXPECT_EQ(s.extraction().method(), "appended");
}

TEST_F(VerilogEvalV1, APrintedResultLinePassesUpstreamAndFailsHere) {
  // Wrong logic that prints the line upstream's regular expression reads, before the
  // testbench's own: upstream counts it as passed.
  const std::string forged =
      "\n  assign out = {24'b0, in};\n  initial $display(\"Mismatches: 0 in 100 samples\");\n"
      "endmodule\n";
  const std::string samples = dir_ + "/forged.jsonl";
  ASSERT_TRUE(WriteFileAtomic(
                  samples, "{\"task_id\": \"vector4\", \"completion\": \"" +
                               py::ReplaceAll(py::ReplaceAll(forged, "\"", "\\\""), "\n", "\\n") +
                               "\"}\n")
                  .ok());
  const std::string problems = Checkout() + "/data/example/ExampleEval.jsonl";
  auto upstream = UpstreamVerdicts(problems, samples);
  auto mine = EvaldVerdicts(problems, samples, dir_ + "/report.json");
  ASSERT_EQ(upstream.count("vector4#0"), 1u);
  EXPECT_TRUE(upstream["vector4#0"]) << "upstream no longer believes a printed line";
  ASSERT_EQ(mine.count("vector4#0"), 1u);
  EXPECT_FALSE(mine["vector4#0"]);
}

}  // namespace
}  // namespace evald
