#include "evald/metrics/power.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace evald {

namespace {

double Mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

double Clamp01(double x) {
  return std::min(1.0, std::max(0.0, x));
}

// Two-sided power of a test whose statistic is normal with mean effect/se and unit variance.
double TwoSidedPower(double effect, double se, double alpha) {
  if (se <= 0) return effect != 0 ? 1.0 : alpha;
  const double z = NormalQuantile(1 - alpha / 2), shift = std::fabs(effect) / se;
  return NormalCdf(shift - z) + NormalCdf(-shift - z);
}

// Standard normal quantiles at (i + 0.5) / count, in a fixed shuffled order (a problem's
// deviation must not follow its baseline rate).
std::vector<double> SpreadQuantiles(size_t count) {
  std::vector<double> z(count);
  for (size_t i = 0; i < count; ++i) z[i] = NormalQuantile((i + 0.5) / count);
  std::mt19937_64 rng(0x7a11);
  std::shuffle(z.begin(), z.end(), rng);
  return z;
}

std::vector<double> Shifted(const std::vector<double>& p, const std::vector<double>& z,
                            double shift, double tau) {
  std::vector<double> q(p.size());
  for (size_t i = 0; i < p.size(); ++i) q[i] = Clamp01(p[i] + shift + tau * z[i]);
  return q;
}

// The shift that makes mean(q - p) = delta (the mean is monotone in the shift).
double ShiftFor(const std::vector<double>& p, const std::vector<double>& z, double delta,
                double tau) {
  double lo = -2 - 8 * tau, hi = 2 + 8 * tau;
  for (int it = 0; it < 200; ++it) {
    const double mid = (lo + hi) / 2;
    const std::vector<double> q = Shifted(p, z, mid, tau);
    double d = 0;
    for (size_t i = 0; i < p.size(); ++i) d += q[i] - p[i];
    (d / p.size() < delta ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

struct Variances {
  double sampling_sum = 0;   // sum over problems of p(1-p) + q(1-q)
  double heterogeneity = 0;  // population variance of q - p
  double mean_difference = 0;
};

Variances VariancesOf(const std::vector<double>& p, const std::vector<double>& q) {
  Variances v;
  std::vector<double> d(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    v.sampling_sum += p[i] * (1 - p[i]) + q[i] * (1 - q[i]);
    d[i] = q[i] - p[i];
  }
  v.mean_difference = Mean(d);
  for (double x : d) v.heterogeneity += (x - v.mean_difference) * (x - v.mean_difference);
  v.heterogeneity /= std::max<size_t>(1, d.size());
  return v;
}

double StandardError(const Variances& v, PlanQuestion q, size_t problems, int n) {
  const double P = static_cast<double>(problems);
  if (q == PlanQuestion::kThisProblemSet) return std::sqrt(v.sampling_sum / n) / P;
  return std::sqrt((v.heterogeneity + v.sampling_sum / P / n) / P);
}

// The model's variances for one delta (z: SpreadQuantiles of the baseline, computed once by the
// caller however many deltas or n it tries).
Variances VariancesAt(const PowerModel& model, const std::vector<double>& z, double delta) {
  const std::vector<double>& p = model.baseline;
  return VariancesOf(p, Shifted(p, z, ShiftFor(p, z, delta, model.tau), model.tau));
}

double PowerWith(const PowerModel& model, PlanQuestion q, const Variances& v, int n) {
  return TwoSidedPower(v.mean_difference, StandardError(v, q, model.baseline.size(), n),
                       model.alpha);
}

}  // namespace

double NormalCdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

double NormalQuantile(double p) {
  if (p <= 0) return -INFINITY;
  if (p >= 1) return INFINITY;
  double lo = -40, hi = 40;  // bisection: exact to double precision, and fast enough here
  for (int it = 0; it < 200 && hi - lo > 1e-15; ++it) {
    const double mid = (lo + hi) / 2;
    (NormalCdf(mid) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

const char* PlanQuestionName(PlanQuestion q) {
  return q == PlanQuestion::kThisProblemSet ? "this problem set" : "problems like these";
}

std::vector<double> HypotheticalRates(double mean_rate, int problems, double logit_sd) {
  const double target = Clamp01(mean_rate);
  std::vector<double> z(static_cast<size_t>(std::max(problems, 1)));
  for (size_t i = 0; i < z.size(); ++i) z[i] = NormalQuantile((i + 0.5) / z.size());
  auto rates = [&](double mu) {
    std::vector<double> p(z.size());
    for (size_t i = 0; i < z.size(); ++i) p[i] = 1 / (1 + std::exp(-(mu + logit_sd * z[i])));
    return p;
  };
  double lo = -40, hi = 40;
  for (int it = 0; it < 200; ++it) {
    const double mid = (lo + hi) / 2;
    (Mean(rates(mid)) < target ? lo : hi) = mid;
  }
  return rates((lo + hi) / 2);
}

std::vector<double> AlternativeRates(const std::vector<double>& baseline, double delta,
                                     double tau) {
  const std::vector<double> z = SpreadQuantiles(baseline.size());
  return Shifted(baseline, z, ShiftFor(baseline, z, delta, tau), tau);
}

double ClosedFormPower(const PowerModel& model, PlanQuestion q, double delta, int n) {
  if (model.baseline.empty() || n < 1) return 0;
  return PowerWith(model, q, VariancesAt(model, SpreadQuantiles(model.baseline.size()), delta), n);
}

int SamplesNeeded(const PowerModel& model, PlanQuestion q, double delta, int max_n) {
  max_n = std::min(max_n, kUnboundedSamples);
  if (model.baseline.empty()) return -1;
  const Variances v = VariancesAt(model, SpreadQuantiles(model.baseline.size()), delta);
  if (PowerWith(model, q, v, max_n) < model.power) return -1;
  int lo = 1, hi = max_n;  // power grows with n
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (PowerWith(model, q, v, mid) >= model.power) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

double MinimumDetectableEffect(const PowerModel& model, PlanQuestion q, int n) {
  if (model.baseline.empty() || n < 1) return NAN;
  const std::vector<double> z = SpreadQuantiles(model.baseline.size());
  auto power = [&](double delta) { return PowerWith(model, q, VariancesAt(model, z, delta), n); };
  double lo = 0, hi = 1 - Mean(model.baseline);  // differences upward, as far as rates can go
  if (hi <= 0 || power(hi) < model.power) return NAN;
  for (int it = 0; it < 60; ++it) {
    const double mid = (lo + hi) / 2;
    (power(mid) < model.power ? lo : hi) = mid;
  }
  return hi;
}

double MinimumDetectableEffectFloor(const PowerModel& model, PlanQuestion q) {
  if (q == PlanQuestion::kThisProblemSet || model.baseline.empty()) return 0;
  // (z_a + z_b) tau_eff / sqrt(P), tau_eff the spread left after clipping to [0, 1] (it shrinks
  // where rates sit at 0 or 1): the MDE at an n large enough for sampling noise to vanish.
  const double mde = MinimumDetectableEffect(model, q, kUnboundedSamples);
  return std::isnan(mde) ? 1 : mde;
}

double SimulatePower(const PowerModel& model, PlanQuestion q, double delta, int n, int runs,
                     uint64_t seed) {
  const std::vector<double>& p = model.baseline;
  if (p.empty() || n < 1 || runs < 1) return 0;
  const size_t P = p.size();
  const std::vector<double> z_fixed = SpreadQuantiles(P);
  const double shift = ShiftFor(p, z_fixed, delta, model.tau);
  const double crit = NormalQuantile(1 - model.alpha / 2);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<size_t> pick(0, P - 1);
  int rejected = 0;
  std::vector<double> a(P), b(P);
  for (int r = 0; r < runs; ++r) {
    for (size_t i = 0; i < P; ++i) {
      // This set: the same problems and differences every time; else drawn again.
      const bool fixed = q == PlanQuestion::kThisProblemSet;
      const double pi = fixed ? p[i] : p[pick(rng)];
      const double qi = Clamp01(pi + shift + model.tau * (fixed ? z_fixed[i] : normal(rng)));
      a[i] = std::binomial_distribution<int>(n, pi)(rng) / static_cast<double>(n);
      b[i] = std::binomial_distribution<int>(n, qi)(rng) / static_cast<double>(n);
    }
    double mean = 0, var = 0, sampling = 0;
    for (size_t i = 0; i < P; ++i) mean += b[i] - a[i];
    mean /= P;
    for (size_t i = 0; i < P; ++i) {
      var += (b[i] - a[i] - mean) * (b[i] - a[i] - mean);
      sampling += a[i] * (1 - a[i]) + b[i] * (1 - b[i]);
    }
    double se = q == PlanQuestion::kThisProblemSet
                    ? std::sqrt(sampling / std::max(1, n - 1)) / P
                    : std::sqrt(var / std::max<size_t>(1, P - 1) / P);
    if (se > 0 ? std::fabs(mean) / se > crit : mean != 0) ++rejected;
  }
  return static_cast<double>(rejected) / runs;
}

double EstimateTau(const std::vector<double>& rates_a, const std::vector<int>& n_a,
                   const std::vector<double>& rates_b, const std::vector<int>& n_b) {
  const size_t P = std::min(rates_a.size(), rates_b.size());
  if (P < 2) return 0;
  std::vector<double> d(P);
  double sampling = 0;
  for (size_t i = 0; i < P; ++i) {
    d[i] = rates_b[i] - rates_a[i];
    sampling += rates_a[i] * (1 - rates_a[i]) / std::max(1, n_a[i] - 1) +
                rates_b[i] * (1 - rates_b[i]) / std::max(1, n_b[i] - 1);
  }
  const double mean = Mean(d);
  double var = 0;
  for (double x : d) var += (x - mean) * (x - mean);
  var /= P - 1;
  return std::sqrt(std::max(0.0, var - sampling / P));
}

}  // namespace evald
