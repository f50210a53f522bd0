#include "evald/metrics/pass_at_k.h"

#include <gtest/gtest.h>

#include "evald/metrics/bootstrap.h"

namespace evald {
namespace {

TEST(PassAtK, ExactValuesWorkedByHand) {
  // n=5, c=2, k=1: c/n.
  EXPECT_DOUBLE_EQ(*PassAtK(5, 2, 1), 0.4);
  // n=10, c=3, k=5: 1 - C(7,5)/C(10,5) = 1 - 21/252 = 11/12.
  EXPECT_NEAR(*PassAtK(10, 3, 5), 11.0 / 12.0, 1e-12);
  // n=20, c=1, k=5: 1 - C(19,5)/C(20,5) = 1 - 15/20 = 0.25.
  EXPECT_NEAR(*PassAtK(20, 1, 5), 0.25, 1e-12);
  // n=4, c=2, k=3: n-c < k, so every draw of 3 holds a pass.
  EXPECT_DOUBLE_EQ(*PassAtK(4, 2, 3), 1.0);
  EXPECT_DOUBLE_EQ(*PassAtK(20, 0, 5), 0.0);
  EXPECT_DOUBLE_EQ(*PassAtK(20, 20, 1), 1.0);
}

TEST(PassAtK, UndefinedCases) {
  EXPECT_FALSE(PassAtK(3, 1, 5).has_value());  // k > n
  EXPECT_FALSE(PassAtK(0, 0, 1).has_value());
  EXPECT_FALSE(PassAtK(5, 6, 1).has_value());
  EXPECT_FALSE(PassAtK(5, -1, 1).has_value());
}

TEST(PassAtK, StableForLargeN) {
  // n=1000, c=1, k=100: 1 - C(999,100)/C(1000,100) = 100/1000 exactly.
  EXPECT_NEAR(*PassAtK(1000, 1, 100), 0.1, 1e-12);
  // C(n, k) overflows doubles long before n = 100000; the product form does not.
  auto v = PassAtK(100000, 50000, 1000);
  ASSERT_TRUE(v.has_value());
  EXPECT_NEAR(*v, 1.0, 1e-12);
}

TEST(PassAtK, MeanSkipsProblemsWithTooFewSamples) {
  std::vector<ProblemCounts> p = {{5, 1}, {5, 5}, {1, 1}};
  EXPECT_NEAR(*MeanPassAtK(p, 1), (0.2 + 1.0 + 1.0) / 3, 1e-12);
  EXPECT_NEAR(*MeanPassAtK(p, 5), (1.0 + 1.0) / 2, 1e-12);  // n=1 problem has no pass@5
  EXPECT_FALSE(MeanPassAtK(p, 6).has_value());
}

TEST(Bootstrap, IntervalContainsMeanAndIsDeterministic) {
  std::vector<double> v = {0, 0, 0, 1, 1, 1, 1, 0.5, 0.25, 0.75};
  Interval a = BootstrapMeanInterval(v), b = BootstrapMeanInterval(v);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_LT(a.low, 0.55);
  EXPECT_GT(a.high, 0.55);
  EXPECT_GE(a.low, 0.0);
  EXPECT_LE(a.high, 1.0);
  // Constant data: no spread.
  Interval c = BootstrapMeanInterval({0.3, 0.3, 0.3});
  EXPECT_DOUBLE_EQ(c.low, 0.3);
  EXPECT_DOUBLE_EQ(c.high, 0.3);
}

TEST(Bootstrap, WidthShrinksWithMoreProblems) {
  std::vector<double> small, large;
  for (int i = 0; i < 10; ++i) small.push_back(i % 2);
  for (int i = 0; i < 1000; ++i) large.push_back(i % 2);
  Interval s = BootstrapMeanInterval(small), l = BootstrapMeanInterval(large);
  EXPECT_GT(s.high - s.low, 3 * (l.high - l.low));
  // Binomial standard error at p=0.5, n=1000 is 0.0158: the 95% interval is about +-0.031.
  EXPECT_NEAR(l.high - l.low, 2 * 1.96 * 0.0158, 0.01);
}

}  // namespace
}  // namespace evald
