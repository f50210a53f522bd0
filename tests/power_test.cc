// Power planning, minimum detectable effects in comparisons, and leaderboard tiers.
#include <gtest/gtest.h>

#include <cmath>

#include "evald/leaderboard/leaderboard.h"
#include "evald/leaderboard/tiers.h"
#include "evald/metrics/power.h"
#include "evald/metrics/power_plan.h"
#include "evald/metrics/run_comparison.h"

namespace evald {
namespace {

TEST(Power, NormalQuantilesAndTheModelsRates) {
  EXPECT_NEAR(NormalQuantile(0.975), 1.959964, 1e-6);
  EXPECT_NEAR(NormalQuantile(0.8), 0.841621, 1e-6);
  EXPECT_NEAR(NormalCdf(NormalQuantile(0.3)), 0.3, 1e-12);
  std::vector<double> p = HypotheticalRates(0.641, 156);
  double mean = 0;
  for (double x : p) mean += x / p.size();
  EXPECT_NEAR(mean, 0.641, 1e-9);
  std::vector<double> q = AlternativeRates(p, 0.056, 0.15);
  double d = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_GE(q[i], 0);
    EXPECT_LE(q[i], 1);
    d += (q[i] - p[i]) / p.size();
  }
  EXPECT_NEAR(d, 0.056, 1e-9);
}

// With tau = 0 and this problem set the closed form is the textbook one.
TEST(Power, ClosedFormMatchesTheFormulaAndTheSimulation) {
  PowerModel m;
  m.baseline = std::vector<double>(100, 0.5);
  const double delta = 0.05;
  // Var = 100 * (0.25 + 0.55 * 0.45) / (n * 100^2); n = z^2 * 0.4975 / (100 * delta^2).
  const double z = NormalQuantile(0.975) + NormalQuantile(0.8);
  const int expected = static_cast<int>(std::ceil(z * z * 0.4975 / (100 * delta * delta)));
  const int n = SamplesNeeded(m, PlanQuestion::kThisProblemSet, delta);
  EXPECT_NEAR(n, expected, 1);
  EXPECT_GE(ClosedFormPower(m, PlanQuestion::kThisProblemSet, delta, n), 0.8);
  EXPECT_LT(ClosedFormPower(m, PlanQuestion::kThisProblemSet, delta, n - 1), 0.8);
  EXPECT_NEAR(SimulatePower(m, PlanQuestion::kThisProblemSet, delta, n, 2000), 0.8, 0.05);
  // The MDE at that n is (about) delta.
  EXPECT_NEAR(MinimumDetectableEffect(m, PlanQuestion::kThisProblemSet, n), delta, 0.003);
}

TEST(Power, ProblemsLikeTheseHaveAFloorNoSampleCountCrosses) {
  PowerModel m;
  m.baseline = HypotheticalRates(0.641, 156);
  m.tau = 0.15;
  const double floor = MinimumDetectableEffectFloor(m, PlanQuestion::kProblemsLikeThese);
  // Clipping rates to [0, 1] shrinks the spread: at most the unclipped (z + z) tau / sqrt(P).
  EXPECT_GT(floor, 0.01);
  EXPECT_LE(floor, (NormalQuantile(0.975) + NormalQuantile(0.8)) * 0.15 / std::sqrt(156.0));
  EXPECT_EQ(SamplesNeeded(m, PlanQuestion::kProblemsLikeThese, floor * 0.9), -1);
  const int n = SamplesNeeded(m, PlanQuestion::kProblemsLikeThese, 0.056);
  ASSERT_GT(n, 0);
  EXPECT_NEAR(SimulatePower(m, PlanQuestion::kProblemsLikeThese, 0.056, n, 2000), 0.8, 0.06);
  // Fixed problems need no more samples than problems that vary.
  EXPECT_LE(SamplesNeeded(m, PlanQuestion::kThisProblemSet, 0.056), n);
  EXPECT_GT(MinimumDetectableEffect(m, PlanQuestion::kProblemsLikeThese, 1000), floor);
}

TEST(Power, TauFromTwoRunsIsTheirDifferencesLessSamplingNoise) {
  // Identical runs: no difference at all, tau 0.
  std::vector<double> a = {0.1, 0.5, 0.9, 0.3}, b = a;
  std::vector<int> n(4, 20);
  EXPECT_DOUBLE_EQ(EstimateTau(a, n, b, n), 0);
  // Large systematic per-problem differences dominate the sampling variance.
  std::vector<double> c = {0.9, 0.1, 0.2, 1.0};
  EXPECT_GT(EstimateTau(a, n, c, n), 0.4);
}

v1::EvalReport ReportOf(const std::vector<std::pair<int, int>>& nc) {
  v1::EvalReport r;
  for (size_t i = 0; i < nc.size(); ++i) {
    auto* p = r.add_problems();
    p->set_problem("P" + std::to_string(i));
    p->set_n(nc[i].first);
    p->set_c(nc[i].second);
  }
  return r;
}

TEST(PowerPlan, WorkedExampleAnswersBothQuestionsWithMethodAndAssumptions) {
  PlanInputs in;
  in.pass_at_1 = 0.641;
  in.problems = 156;
  in.delta = 0.697 - 0.641;
  in.simulations = 300;
  auto plan = MakePowerPlan(in);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->answers_size(), 2);
  EXPECT_EQ(plan->answers(0).question(), "this problem set");
  EXPECT_EQ(plan->answers(1).question(), "problems like these");
  EXPECT_GT(plan->answers(0).samples_needed(), 0);
  EXPECT_GE(plan->answers(1).samples_needed(), plan->answers(0).samples_needed());
  EXPECT_NEAR(plan->tau(), kDefaultTau, 1e-12);
  EXPECT_FALSE(plan->method().empty());
  EXPECT_GE(plan->assumptions_size(), 3);
  EXPECT_FALSE(MakePowerPlan(PlanInputs{}).ok());  // neither a report nor a pass@1
  // From two reports: tau and delta from the pair.
  v1::EvalReport a = ReportOf({{10, 2}, {10, 8}, {10, 5}, {10, 10}, {10, 0}, {10, 6}});
  v1::EvalReport b = ReportOf({{10, 4}, {10, 9}, {10, 5}, {10, 10}, {10, 3}, {10, 7}});
  PlanInputs pair;
  pair.a = &a;
  pair.b = &b;
  pair.simulations = 100;
  auto from_pair = MakePowerPlan(pair);
  ASSERT_TRUE(from_pair.ok()) << from_pair.status().ToString();
  EXPECT_NEAR(from_pair->delta(), 0.7 / 6, 1e-9);
  EXPECT_EQ(from_pair->answers(0).n(), 10);
  EXPECT_NE(from_pair->tau_source().find("estimated"), std::string::npos);
}

TEST(Compare, NotSignificantComesWithTheMinimumDetectableEffect) {
  v1::EvalReport a = ReportOf({{5, 2}, {5, 3}, {5, 1}, {5, 4}, {5, 2}, {5, 3}});
  v1::EvalReport b = ReportOf({{5, 3}, {5, 2}, {5, 2}, {5, 4}, {5, 2}, {5, 3}});
  CompareOptions o;
  v1::Comparison c = CompareReports(a, b, o);
  ASSERT_GE(c.ks_size(), 1);
  EXPECT_GT(c.ks(0).mde(), 0);
  EXPECT_GT(c.ks(0).mde_this_problem_set(), 0);
  EXPECT_NE(c.conclusion().find("minimum detectable effect"), std::string::npos) << c.conclusion();
}

TEST(Tiers, HolmAndGroupingByDistinguishability) {
  std::vector<double> adj = HolmAdjust({0.01, 0.04, 0.03});
  EXPECT_NEAR(adj[0], 0.03, 1e-12);
  EXPECT_NEAR(adj[1], 0.06, 1e-12);
  EXPECT_NEAR(adj[2], 0.06, 1e-12);
  // Three runs over 40 problems: two close strong ones and a clearly weaker one.
  auto run = [](const std::string& id, int c_mod) {
    v1::Run r;
    r.set_id(id);
    r.set_state(v1::SUCCEEDED);
    r.mutable_spec()->add_k(1);
    double sum = 0;
    for (int i = 0; i < 40; ++i) {
      auto* p = r.add_problems();
      p->set_problem("P" + std::to_string(i));
      p->set_n(10);
      p->set_c(i % c_mod == 0 ? 2 : 9);
      sum += p->c() / 10.0;
    }
    (*r.mutable_summary()->mutable_pass_at())["1"] = sum / 40;
    return r;
  };
  std::vector<v1::Run> runs = {run("strong", 40), run("close", 20), run("weak", 1)};
  v1::Leaderboard board = BuildLeaderboard(runs, {});
  ASSERT_EQ(board.rows_size(), 3);
  EXPECT_EQ(board.rows(0).run_id(), "strong");
  EXPECT_EQ(board.rows(0).tier(), 1);
  EXPECT_EQ(board.rows(1).tier(), 1);  // 0.0175 apart on 40 problems: not distinguishable
  EXPECT_EQ(board.rows(2).tier(), 2);
  EXPECT_EQ(board.pairs_size(), 3);
  for (const auto& pair : board.pairs()) EXPECT_GT(pair.mde(), 0);
  // Cached pair tests give the same board.
  PairwiseCache cache;
  v1::Leaderboard first = BuildLeaderboard(runs, {}, 1, 0.05, &cache);
  v1::Leaderboard second = BuildLeaderboard(runs, {}, 1, 0.05, &cache);
  EXPECT_EQ(first.SerializeAsString(), board.SerializeAsString());
  EXPECT_EQ(second.SerializeAsString(), board.SerializeAsString());
  for (const char* format : {"csv", "markdown", "html"}) {
    auto text = RenderLeaderboard(board, format);
    ASSERT_TRUE(text.ok());
    EXPECT_NE(text->find("tier"), std::string::npos) << format;
  }
  auto html = RenderLeaderboard(board, "html");
  EXPECT_NE(html->find("id=\"pairs\""), std::string::npos);
}

}  // namespace
}  // namespace evald
