// The drift figures on distributions small enough to work out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "evald/metrics/distribution_drift.h"

namespace evald {
namespace {

std::vector<float> Logs(const std::vector<double>& p) {
  std::vector<float> out;
  for (double x : p) out.push_back(static_cast<float>(std::log(x)));
  return out;
}

TEST(DistributionDrift, IdenticalDistributionsDoNotDrift) {
  const auto p = Logs({0.7, 0.2, 0.1});
  DriftAccumulator acc;
  for (int next : {0, 1, 2}) acc.Add(CompareNextToken(p, p, next));
  const v1::DriftFigures f = acc.Figures();
  EXPECT_EQ(f.tokens(), 3);
  EXPECT_NEAR(f.mean_kl(), 0, 1e-7);
  EXPECT_NEAR(f.p99_kl(), 0, 1e-7);
  EXPECT_DOUBLE_EQ(f.top1_agreement(), 1);
  EXPECT_NEAR(f.dp_rms(), 0, 1e-7);
  EXPECT_NEAR(f.ppl_ratio(), 1, 1e-6);
}

TEST(DistributionDrift, FiguresByHand) {
  const auto base = Logs({0.5, 0.5}), cand = Logs({0.25, 0.75});
  // KL = 0.5 ln(0.5/0.25) + 0.5 ln(0.5/0.75); the likeliest token differs (a tie goes to the
  // first); the next token 1: p 0.5 -> 0.75.
  const TokenDrift d = CompareNextToken(base, cand, 1);
  EXPECT_NEAR(d.kl, 0.5 * std::log(2.0) + 0.5 * std::log(2.0 / 3.0), 1e-6);
  EXPECT_FALSE(d.same_top);
  EXPECT_NEAR(d.p_candidate - d.p_base, 0.25, 1e-6);
  DriftAccumulator acc;
  acc.Add(d);
  acc.Add(CompareNextToken(base, base, 0));
  const v1::DriftFigures f = acc.Figures();
  EXPECT_NEAR(f.mean_kl(), d.kl / 2, 1e-6);
  EXPECT_NEAR(f.p99_kl(), d.kl, 1e-6);  // the larger of two
  EXPECT_DOUBLE_EQ(f.top1_agreement(), 0.5);
  EXPECT_NEAR(f.dp_rms(), std::sqrt(0.25 * 0.25 / 2), 1e-6);
  // Perplexity: exp(mean NLL); candidate -ln 0.75 - ln 0.5, base -2 ln 0.5, over 2 tokens.
  EXPECT_NEAR(f.ppl_ratio(), std::exp((-std::log(0.75) + std::log(0.5)) / 2), 1e-6);
  DriftAccumulator merged;
  merged.Merge(acc);
  merged.Merge(acc);
  EXPECT_EQ(merged.tokens(), 4);
  EXPECT_NEAR(merged.Figures().mean_kl(), f.mean_kl(), 1e-9);
  EXPECT_EQ(DriftAccumulator().Figures().tokens(), 0);
}

}  // namespace
}  // namespace evald
