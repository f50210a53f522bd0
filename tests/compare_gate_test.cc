#include <gtest/gtest.h>

#include <functional>

#include "evald/gate/ci_gate.h"
#include "evald/metrics/paired_tests.h"
#include "evald/metrics/run_comparison.h"

namespace evald {
namespace {

TEST(PairedTests, SignTestExactValues) {
  EXPECT_DOUBLE_EQ(SignTestP(5, 0), 2.0 / 32);  // 2 * (1/2)^5
  EXPECT_DOUBLE_EQ(SignTestP(0, 5), 2.0 / 32);
  EXPECT_NEAR(SignTestP(8, 2), 2.0 * 56 / 1024, 1e-12);  // 2 * P(X <= 2), n = 10: (1+10+45)/1024
  EXPECT_DOUBLE_EQ(SignTestP(3, 3), 1.0);
  EXPECT_DOUBLE_EQ(SignTestP(0, 0), 1.0);
}

TEST(PairedTests, PermutationTestExactValues) {
  EXPECT_DOUBLE_EQ(SignFlipPermutationP({1, 1, 1, 1, 1}), 2.0 / 32);
  EXPECT_DOUBLE_EQ(SignFlipPermutationP({1, -1}), 1.0);
  EXPECT_DOUBLE_EQ(SignFlipPermutationP({3, 1}), 0.5);  // sums +-4, +-2: |s| >= 4 in 2 of 4
  EXPECT_DOUBLE_EQ(SignFlipPermutationP({0, 0, 0}), 1.0);
  EXPECT_DOUBLE_EQ(SignFlipPermutationP({2, 0, 2}), 0.5);  // zeros do not count
  // 20 equal positive differences: only the two all-same-sign assignments reach |20|.
  EXPECT_NEAR(SignFlipPermutationP(std::vector<int64_t>(20, 3)), 2.0 / (1 << 20), 1e-15);
}

v1::EvalReport Report(const std::vector<std::tuple<std::string, int, int>>& problems) {
  v1::EvalReport r;
  r.add_k(1);
  r.add_k(5);
  for (const auto& [name, n, c] : problems) {
    auto* p = r.add_problems();
    p->set_problem(name);
    p->set_n(n);
    p->set_c(c);
  }
  return r;
}

TEST(CompareReports, PerProblemDeltasFlipsAndSharedSet) {
  auto a = Report({{"P1", 5, 0}, {"P2", 5, 5}, {"P3", 5, 2}, {"P5", 5, 1}});
  auto b = Report({{"P1", 5, 5}, {"P2", 5, 0}, {"P3", 5, 2}, {"P4", 5, 5}});
  v1::Comparison c = CompareReports(a, b, {});
  EXPECT_EQ(c.shared_problems(), 3);
  ASSERT_EQ(c.only_in_a_size(), 1);
  EXPECT_EQ(c.only_in_a(0), "P5");
  ASSERT_EQ(c.only_in_b_size(), 1);
  ASSERT_EQ(c.gained_size(), 1);
  EXPECT_EQ(c.gained(0), "P1");
  ASSERT_EQ(c.lost_size(), 1);
  EXPECT_EQ(c.lost(0), "P2");
  ASSERT_EQ(c.ks_size(), 2);
  const auto& k1 = c.ks(0);
  EXPECT_EQ(k1.k(), 1);
  EXPECT_NEAR(k1.delta(), 0.0, 1e-12);
  EXPECT_EQ(k1.better(), 1);
  EXPECT_EQ(k1.worse(), 1);
  EXPECT_EQ(k1.ties(), 1);
  EXPECT_DOUBLE_EQ(k1.permutation_p(), 1.0);
  EXPECT_NE(c.conclusion().find("no significant difference"), std::string::npos);
}

// VerilogEval v1's Human and Machine sets name every problem alike, with other prompts; v2's
// tasks too: reports of two tasks are refused, whatever their names share.
TEST(CompareReports, ReportsOfTwoProblemSetsAreRefused) {
  auto human = Report({{"zero", 5, 5}, {"gatesv", 5, 0}});
  auto machine = Report({{"zero", 5, 0}, {"gatesv", 5, 0}});
  human.set_task("verilog-eval-v1-human");
  machine.set_task("verilog-eval-v1-machine");
  Status refused = SameProblemSet(human, machine);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.ToString().find("verilog-eval-v1-machine"), std::string::npos);
  EXPECT_TRUE(SameProblemSet(human, human).ok());
  auto old_report = Report({{"P1", 5, 1}});  // no task recorded: spec-to-rtl
  auto spec = Report({{"P1", 5, 2}});
  spec.set_task("spec-to-rtl");
  EXPECT_TRUE(SameProblemSet(old_report, spec).ok());
  spec.set_task("code-complete-iccad2023");
  EXPECT_FALSE(SameProblemSet(old_report, spec).ok());
  // One task, two contents (another version of the benchmark, an edited copy): refused too.
  auto edited = human;
  human.mutable_benchmark()->set_problems_sha256(std::string(64, 'a'));
  edited.mutable_benchmark()->set_problems_sha256(std::string(64, 'b'));
  refused = SameProblemSet(human, edited);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.ToString().find("digest"), std::string::npos);
  edited.clear_benchmark();  // a report from before the digest was recorded says nothing
  EXPECT_TRUE(SameProblemSet(human, edited).ok());
}

TEST(CompareReports, DetectsAClearImprovement) {
  std::vector<std::tuple<std::string, int, int>> pa, pb;
  for (int i = 0; i < 30; ++i) {
    pa.emplace_back("P" + std::to_string(i), 20, 4);
    pb.emplace_back("P" + std::to_string(i), 20, 12);
  }
  v1::Comparison c = CompareReports(Report(pa), Report(pb), {});
  const auto& k1 = c.ks(0);
  EXPECT_NEAR(k1.delta(), 0.4, 1e-12);
  EXPECT_LT(k1.permutation_p(), 1e-6);
  EXPECT_GT(k1.delta_ci95().low(), 0.3);
  EXPECT_NE(c.conclusion().find("B is better"), std::string::npos) << c.conclusion();
  EXPECT_LT(DecisiveP(c, 5), 1e-6);  // pass@5 falls back to the sign test
}

TEST(Gate, ThresholdsParseAndDecide) {
  auto t = ParseThresholds("pass@1>=0.5, pass@5=0.75,3:0.1");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->size(), 3u);
  EXPECT_EQ((*t)[1].k, 5);
  EXPECT_DOUBLE_EQ((*t)[1].minimum, 0.75);
  EXPECT_FALSE(ParseThresholds("pass@1>0.5x").ok());
  EXPECT_FALSE(ParseThresholds("pass@1>=1.5").ok());

  v1::EvalReport r = Report({{"P1", 5, 3}});
  (*r.mutable_summary()->mutable_pass_at())["1"] = 0.6;
  GateOptions ok;
  ok.thresholds = {{1, 0.5}};
  EXPECT_TRUE(EvaluateGate(r, ok).passed);
  GateOptions fail;
  fail.thresholds = {{1, 0.7}};
  GateResult res = EvaluateGate(r, fail);
  EXPECT_FALSE(res.passed);
  EXPECT_EQ(res.Verdict(), "FAIL");
  GateOptions missing;
  missing.thresholds = {{5, 0.1}};  // no pass@5 in the summary
  EXPECT_FALSE(EvaluateGate(r, missing).passed);
  EXPECT_FALSE(EvaluateGate(r, GateOptions{}).passed);  // nothing to gate on
}

// A baseline and a candidate over 25 problems named name(i) of 10 samples each, problem i
// passing base(i) and candidate(i) of them.
std::pair<v1::EvalReport, v1::EvalReport> ReportPair(const std::function<std::string(int)>& name,
                                                     const std::function<int(int)>& base,
                                                     const std::function<int(int)>& candidate) {
  std::vector<std::tuple<std::string, int, int>> b, c;
  for (int i = 0; i < 25; ++i) {
    b.emplace_back(name(i), 10, base(i));
    c.emplace_back(name(i), 10, candidate(i));
  }
  return {Report(b), Report(c)};
}

TEST(Gate, RegressionAgainstBaselineAndRenderings) {
  const auto [b, c] = ReportPair([](int i) { return "P<" + std::to_string(i) + "&"; },
                                 [](int) { return 9; }, [](int i) { return i < 5 ? 0 : 3; });
  GateOptions opts;
  opts.baseline = &b;
  GateResult res = EvaluateGate(c, opts);
  EXPECT_FALSE(res.passed);
  ASSERT_TRUE(res.comparison.has_value());
  EXPECT_EQ(res.comparison->lost_size(), 5);
  std::string xml = GateJUnitXml(c, res);
  EXPECT_NE(xml.find("<testsuites"), std::string::npos);
  EXPECT_NE(xml.find("<failure"), std::string::npos);
  EXPECT_NE(xml.find("P&lt;0&amp;"), std::string::npos);  // escaped names
  EXPECT_EQ(xml.find("P<0&"), std::string::npos);
  std::string md = GateMarkdown(c, res);
  EXPECT_NE(md.find("**FAIL**"), std::string::npos);
  EXPECT_NE(md.find("Against the baseline baseline: 25 problems both reports share"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("lost"), std::string::npos);
  // The same run against itself is no regression.
  GateOptions self;
  self.baseline = &b;
  EXPECT_TRUE(EvaluateGate(b, self).passed);
}

// --strict: a report with input errors fails, naming the first; without them it passes.
TEST(Gate, StrictFailsOnInputErrors) {
  v1::EvalReport r = Report({{"P1", 5, 3}});
  GateOptions opts;
  opts.strict = true;
  EXPECT_TRUE(EvaluateGate(r, opts).passed);
  r.mutable_summary()->set_input_errors(2);
  v1::InputError* e = r.add_input_errors();
  e->set_line(7);
  e->set_message("not JSON");
  GateResult res = EvaluateGate(r, opts);
  EXPECT_FALSE(res.passed);
  ASSERT_EQ(res.checks.size(), 1u);
  EXPECT_NE(res.checks[0].message.find("2 input error(s)"), std::string::npos);
  EXPECT_NE(res.checks[0].message.find("line 7: not JSON"), std::string::npos)
      << res.checks[0].message;
}

// A candidate significantly better than its baseline passes, and the check says it improved
// (not "not significant"), with the number of problems compared.
TEST(Gate, ASignificantImprovementIsCalledOne) {
  const auto [b, c] = ReportPair([](int i) { return "P" + std::to_string(i); },
                                 [](int) { return 2; }, [](int) { return 9; });
  GateOptions opts;
  opts.baseline = &b;
  GateResult res = EvaluateGate(c, opts);
  EXPECT_TRUE(res.passed);
  ASSERT_FALSE(res.checks.empty());
  EXPECT_NE(res.checks[0].message.find("a significant improvement"), std::string::npos)
      << res.checks[0].message;
  EXPECT_EQ(res.checks[0].message.find("not significant"), std::string::npos)
      << res.checks[0].message;
  EXPECT_NE(res.checks[0].message.find("over 25 problems both reports share"), std::string::npos)
      << res.checks[0].message;
}

}  // namespace
}  // namespace evald
