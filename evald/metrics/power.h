// Power planning for a paired comparison of two checkpoints' pass@1 over one problem set: how
// many samples per problem a difference needs, and the smallest difference a given evaluation
// can detect. Two questions, answered apart because they differ in kind:
//
//  * "this problem set": the problems are fixed; only the sampling of completions is noise.
//    The test is a z-test of the mean per-problem difference with its binomial standard error.
//    More samples per problem always help.
//  * "problems like these": the problems are a sample too. The true per-problem differences
//    vary around their mean with standard deviation tau; the test is the paired test over
//    problems (a t-test; evald compare's sign-flip permutation test is its exact counterpart).
//    Var(mean difference) = (tau^2 + mean sampling variance / n) / P: no n brings it below
//    tau^2 / P, so some differences cannot be detected at all.
//
// Model of the alternative (stated in every answer): the baseline's per-problem rates p_i (from
// a report, or logit-normal around a hypothetical mean), the other checkpoint's
// q_i = clip(p_i + shift + tau * z_i) to [0, 1], z_i the normal quantiles in a fixed shuffled
// order, shift chosen so that mean(q_i - p_i) is exactly the target difference. Closed forms use
// the normal approximation; `SimulatePower` checks them by simulating binomial counts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace evald {

// Inverse of the standard normal CDF (0 < p < 1).
double NormalQuantile(double p);
double NormalCdf(double x);

enum class PlanQuestion { kThisProblemSet, kProblemsLikeThese };
const char* PlanQuestionName(PlanQuestion q);

struct PowerModel {
  std::vector<double> baseline;  // per-problem pass@1 of the baseline checkpoint
  double tau = 0.0;              // SD of the true per-problem differences (probability scale)
  double alpha = 0.05;           // two-sided
  double power = 0.8;
};

// Per-problem rates of a hypothetical baseline: `problems` logit-normal rates (logit SD
// `logit_sd`, the U shape of verilog-eval's per-problem rates) whose mean is `mean_rate`.
std::vector<double> HypotheticalRates(double mean_rate, int problems, double logit_sd = 2.5);

// The other checkpoint's per-problem rates under the model, mean difference exactly `delta`
// (when reachable inside [0, 1]).
std::vector<double> AlternativeRates(const std::vector<double>& baseline, double delta, double tau);

// Power of the question's test with n samples per problem (both checkpoints), normal
// approximation.
double ClosedFormPower(const PowerModel& model, PlanQuestion q, double delta, int n);

// Where "as n grows without bound" is evaluated: sampling noise is then negligible.
inline constexpr int kUnboundedSamples = 1000000;

// The smallest n (<= max_n) reaching the model's power; -1 when none does (for
// kProblemsLikeThese: delta below the floor that tau sets).
int SamplesNeeded(const PowerModel& model, PlanQuestion q, double delta,
                  int max_n = kUnboundedSamples);

// The smallest |difference| detected with the model's power at n samples per problem.
double MinimumDetectableEffect(const PowerModel& model, PlanQuestion q, int n);

// As n grows without bound: 0 for kThisProblemSet; about (z_a + z_b) tau / sqrt(P) for the
// other (tau shrunk by the clipping of rates to [0, 1]).
double MinimumDetectableEffectFloor(const PowerModel& model, PlanQuestion q);

// Power by simulation: `runs` evaluations drawn under the model (for kProblemsLikeThese the
// problems are drawn again each time, with replacement, and their differences with them), each
// tested as the question's test does. Deterministic for a seed.
double SimulatePower(const PowerModel& model, PlanQuestion q, double delta, int n, int runs,
                     uint64_t seed = 1);

// tau estimated from two runs on the same problems: the variance of the observed per-problem
// differences less their mean sampling variance (method of moments, at least 0).
double EstimateTau(const std::vector<double>& rates_a, const std::vector<int>& n_a,
                   const std::vector<double>& rates_b, const std::vector<int>& n_b);

}  // namespace evald
