// The one run pipeline: `evald eval` (Evaluate) and the daemon (RunRequests + RunQueue) give
// the same report, with the same fields, for the same samples, and the grading stage simulates each
// distinct (problem, code) once per session however concurrently it is submitted.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "base/file_io.h"
#include "base/hash.h"
#include "datasets/dataset.h"
#include "evald/runs/dataset_registry.h"
#include "evald/runs/evaluation.h"
#include "evald/runs/grading_session.h"
#include "evald/runs/grading_settings.h"
#include "evald/server/run_queue.h"
#include "evald/server/run_records.h"
#include "evald/server/run_requests.h"
#include "harness/testbench_hardening.h"
#include "test_support.h"

namespace evald {
namespace {

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/tmp/evald-pipeline-test-" + RandomHex(6);
    auto ds = Dataset::Load(testing::BuiltinDataset(), Task::kSpecToRtl);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    dataset_ = std::make_unique<Dataset>(std::move(*ds));
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string dir_;
  std::unique_ptr<Dataset> dataset_;
};

// Runs the samples through the daemon's parts (in process, its own store) to the end.
v1::EvalReport RunThroughDaemon(const std::string& dir, const std::string& jsonl,
                                v1::RunSpec spec = {}) {
  auto store = Store::Open(dir);
  EXPECT_TRUE(store.ok());
  DatasetRegistry datasets({});
  RunRequests requests(store->get(), &datasets, {});
  RunQueue queue(store->get(), &datasets, {});
  EXPECT_TRUE(queue.Start().ok());
  spec.set_dataset("builtin");
  auto created = requests.CreateRun(spec, jsonl);
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  queue.Enqueue(created->id());
  RunRecords records(**store);
  for (int i = 0; i < 2400; ++i) {
    auto run = records.GetRun(created->id());
    if (run.ok() && run->state() == v1::SUCCEEDED) break;
    EXPECT_TRUE(run.ok() && run->state() != v1::FAILED) << run->state_reason();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto report = records.Report(created->id());
  EXPECT_TRUE(report.ok());
  queue.Stop();
  return *report;
}

TEST_F(PipelineTest, TheCliAndTheDaemonGiveTheSameReport) {
  auto text = ReadFileBounded(testing::BuiltinDataset() + "/samples_spec-to-rtl.jsonl", 1 << 24);
  ASSERT_TRUE(text.ok());
  std::string jsonl = *text;
  SamplesFile parsed = ParseSamplesJsonl(jsonl);
  auto cli = Evaluate(*dataset_, parsed, EvalOptions{});
  ASSERT_TRUE(cli.ok()) << cli.status().ToString();
  v1::EvalReport daemon = RunThroughDaemon(dir_, jsonl);
  ASSERT_EQ(cli->samples_size(), daemon.samples_size());
  ASSERT_GT(cli->samples_size(), 50);
  // The daemon lists samples by (problem, index); the CLI in input order.
  std::map<std::pair<std::string, int>, const v1::SampleResult*> by_key;
  for (const auto& s : daemon.samples()) by_key[{s.problem(), s.index()}] = &s;
  int deduplicated = 0;
  for (const auto& a : cli->samples()) {
    const v1::SampleResult* b = by_key[{a.problem(), a.index()}];
    ASSERT_NE(b, nullptr) << a.problem() << " #" << a.index();
    SCOPED_TRACE(a.problem() + " #" + std::to_string(a.index()));
    EXPECT_EQ(a.verdict(), b->verdict());
    EXPECT_EQ(a.passed(), b->passed());
    EXPECT_EQ(a.mismatches(), b->mismatches());
    EXPECT_EQ(a.samples_checked(), b->samples_checked());
    EXPECT_EQ(a.benchmark_verdict(), b->benchmark_verdict());
    EXPECT_EQ(a.detail(), b->detail());
    EXPECT_EQ(a.code_sha256(), b->code_sha256());
    EXPECT_EQ(a.extraction().SerializeAsString(), b->extraction().SerializeAsString());
    EXPECT_EQ(a.deduplicated(), b->deduplicated());
    EXPECT_EQ(a.line(), b->line());
    // Both grade with the default cross-checks: formal on every passing design.
    EXPECT_EQ(a.formal().outcome(), b->formal().outcome());
    EXPECT_EQ(a.formal().detail(), b->formal().detail());
    EXPECT_EQ(a.cross_check(), b->cross_check());
    EXPECT_EQ(a.strict_passed(), b->strict_passed());
    if (a.passed() && !cli->grading().cross_checks().yosys_version().empty()) {
      EXPECT_EQ(a.formal().outcome(), "proven");
    }
    deduplicated += a.deduplicated();
  }
  EXPECT_GT(deduplicated, 0);  // the built-in set repeats codes; each ran once in both
  ASSERT_EQ(cli->problems_size(), daemon.problems_size());
  for (int i = 0; i < cli->problems_size(); ++i) {
    EXPECT_EQ(cli->problems(i).n(), daemon.problems(i).n());
    EXPECT_EQ(cli->problems(i).c(), daemon.problems(i).c());
  }
  for (const auto& [k, v] : cli->summary().pass_at())
    EXPECT_DOUBLE_EQ(v, daemon.summary().pass_at().at(k)) << "pass@" << k;
  for (const auto& [k, v] : cli->summary().strict_pass_at())
    EXPECT_DOUBLE_EQ(v, daemon.summary().strict_pass_at().at(k)) << "strict pass@" << k;
  EXPECT_DOUBLE_EQ(cli->summary().benchmark_pass_rate(), daemon.summary().benchmark_pass_rate());
  // One report builder: the header and the counters are there in both.
  EXPECT_EQ(cli->grading().SerializeAsString(), daemon.grading().SerializeAsString());
  EXPECT_EQ(cli->simulator_version(), daemon.simulator_version());
  EXPECT_EQ(cli->sandbox_layers(), daemon.sandbox_layers());
  // The dataset by what each was told: the CLI its folder, the daemon its registry's name.
  EXPECT_EQ(daemon.dataset(), "builtin");
  EXPECT_EQ(cli->task(), daemon.task());
  EXPECT_EQ(cli->calibration_size(), daemon.calibration_size());
  EXPECT_EQ(cli->summary().simulations(), daemon.summary().simulations());
  EXPECT_GT(daemon.summary().simulations(), 0);
  EXPECT_EQ(cli->summary().cache_hits(), daemon.summary().cache_hits());
  EXPECT_GT(cli->summary().wall_seconds(), 0);
  EXPECT_GT(daemon.summary().wall_seconds(), 0);
  using Counts = std::map<std::string, int>;
  const auto& cli_counts = cli->summary().categories();
  const auto& daemon_counts = daemon.summary().categories();
  EXPECT_EQ(Counts(cli_counts.begin(), cli_counts.end()),
            Counts(daemon_counts.begin(), daemon_counts.end()));
}

// A run spec's cross-checks reach the daemon's grading, and its report carries them.
TEST_F(PipelineTest, TheDaemonGradesWithTheRunsCrossChecks) {
  const std::string trojan =
      "{\"problem\": \"Bi02_mux2_byte\", \"code\": \"module TopModule(input sel, input [7:0] a, "
      "input [7:0] b, output logic [7:0] out);\\n  assign out = (sel && a == 8'hC3 && b == "
      "8'h3C) ? 8'h00 : (sel ? b : a);\\nendmodule\\n\"}\n";
  v1::RunSpec spec;
  spec.mutable_grading()->mutable_cross_checks()->set_formal(true);
  spec.mutable_grading()->mutable_cross_checks()->set_synthesis(true);
  v1::EvalReport report = RunThroughDaemon(dir_, trojan, spec);
  if (report.grading().cross_checks().yosys_version().empty()) GTEST_SKIP() << "no yosys";
  ASSERT_EQ(report.samples_size(), 1);
  EXPECT_TRUE(report.samples(0).passed());
  EXPECT_EQ(report.samples(0).cross_check(), "refuted") << report.samples(0).formal().detail();
  EXPECT_TRUE(report.grading().cross_checks().synthesis());
  EXPECT_EQ(report.summary().formal_refuted(), 1);
  EXPECT_DOUBLE_EQ(report.summary().strict_pass_at().at("1"), 0.0);
  v1::RunSpec bad;
  bad.mutable_grading()->mutable_cross_checks()->set_bound_cycles(5000);
  auto store = Store::Open(dir_ + "-bad");
  ASSERT_TRUE(store.ok());
  DatasetRegistry datasets({});
  RunRequests requests(store->get(), &datasets, {});
  bad.set_dataset("builtin");
  EXPECT_FALSE(requests.CreateRun(bad, trojan).ok());  // bounded: a request cannot make it spin
  // The legacy spelling of the same field is held to the same bound.
  v1::RunSpec legacy;
  legacy.set_dataset("builtin");
  legacy.mutable_cross_checks()->set_bound_cycles(5000);
  EXPECT_FALSE(requests.CreateRun(legacy, trojan).ok());
  std::system(("rm -rf " + dir_ + "-bad").c_str());
}

TEST_F(PipelineTest, ConcurrentSubmissionsOfOneCodeSimulateOnce) {
  const Problem& problem = dataset_->problems().front();
  v1::GradingSettings settings;
  ASSERT_TRUE(NormalizeGradingSettings(&settings).ok());
  GradingResources resources;
  resources.jobs = 2;
  auto session = GradingSession::Open(settings, resources, *dataset_, {&problem});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  // Not the reference's text (that one is classified from the calibration run).
  const std::string code = ReferenceAsDesign(problem.reference) + "\n// a comment\n";
  std::atomic<int> answered{0}, duplicates{0}, passed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i)
        (*session)->Grade(problem, code, {"", t * 5 + i}, [&](GradeOutcome& o) {
          ++answered;
          duplicates += o.source == VerdictSource::kDuplicate;
          passed += o.verdict.passed;
        });
    });
  for (auto& th : threads) th.join();
  (*session)->Wait();
  EXPECT_EQ(answered, 20);
  EXPECT_EQ((*session)->simulations(), 1);
  EXPECT_EQ(duplicates, 19);
  EXPECT_EQ(passed, 20);
  // The reference itself needs no simulation: its calibration run is classified again.
  std::atomic<bool> reference_passed{false};
  (*session)->Grade(problem, ReferenceAsDesign(problem.reference), {"", 99}, [&](GradeOutcome& o) {
    EXPECT_EQ(o.source, VerdictSource::kReference);
    reference_passed = o.verdict.passed;
  });
  (*session)->Wait();
  EXPECT_TRUE(reference_passed);
  EXPECT_EQ((*session)->simulations(), 1);
}

}  // namespace
}  // namespace evald
