#include "evald/metrics/run_comparison.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <numeric>

#include "evald/metrics/bootstrap.h"
#include "evald/metrics/paired_tests.h"
#include "evald/metrics/pass_at_k.h"
#include "evald/metrics/power.h"

namespace evald {

namespace {

// lcm of the sample counts, or 0 when it grows past `cap` (the exact test then is skipped).
int64_t CommonScale(
    const std::vector<std::pair<const v1::ProblemResult*, const v1::ProblemResult*>>& pairs,
    int64_t cap) {
  int64_t l = 1;
  for (const auto& [a, b] : pairs) {
    for (int64_t n : {static_cast<int64_t>(a->n()), static_cast<int64_t>(b->n())}) {
      if (n <= 0) continue;
      l = std::lcm(l, n);
      if (l > cap) return 0;
    }
  }
  return l;
}

}  // namespace

namespace {

using ProblemPairs = std::vector<std::pair<const v1::ProblemResult*, const v1::ProblemResult*>>;

// The problems both reports have (in name order); the others listed in `out`.
ProblemPairs SharedProblems(const v1::EvalReport& a, const v1::EvalReport& b, v1::Comparison* out) {
  std::map<std::string, const v1::ProblemResult*> pa, pb;
  for (const auto& p : a.problems()) pa[p.problem()] = &p;
  for (const auto& p : b.problems()) pb[p.problem()] = &p;
  ProblemPairs shared;
  for (const auto& [name, p] : pa) {
    auto it = pb.find(name);
    if (it == pb.end()) {
      out->add_only_in_a(name);
    } else {
      shared.emplace_back(p, it->second);
    }
  }
  for (const auto& [name, p] : pb)
    if (!pa.count(name)) out->add_only_in_b(name);
  out->set_shared_problems(static_cast<int>(shared.size()));
  return shared;
}

void AddProblemDelta(const v1::ProblemResult& x, const v1::ProblemResult& y,
                     const std::vector<int>& ks, v1::Comparison* out) {
  v1::ProblemDelta* d = out->add_problems();
  d->set_problem(x.problem());
  d->set_a_n(x.n());
  d->set_a_c(x.c());
  d->set_b_n(y.n());
  d->set_b_c(y.c());
  for (int k : ks) {
    auto va = PassAtK(x.n(), x.c(), k), vb = PassAtK(y.n(), y.c(), k);
    std::string key = std::to_string(k);
    if (va) (*d->mutable_a_pass_at())[key] = *va;
    if (vb) (*d->mutable_b_pass_at())[key] = *vb;
    if (va && vb) (*d->mutable_delta())[key] = *vb - *va;
  }
  if (x.c() == 0 && y.c() > 0) {
    d->set_flip("gained");
    out->add_gained(x.problem());
  } else if (x.c() > 0 && y.c() == 0) {
    d->set_flip("lost");
    out->add_lost(x.problem());
  }
}

// (z_(1-alpha/2) + z_0.8) times a standard error: the difference detected 80% of the time.
double Mde80(double alpha, double se) {
  return (NormalQuantile(1 - alpha / 2) + NormalQuantile(0.8)) * se;
}

// The smallest pass@1 difference the pair's own sampling noise lets through 80% of the time,
// the problems held fixed: sqrt(sum_i a_i(1-a_i)/n_a + b_i(1-b_i)/n_b) / P.
double MdeThisProblemSet(const ProblemPairs& shared, double alpha) {
  double var = 0;
  int problems = 0;
  for (const auto& [x, y] : shared) {
    if (x->n() <= 0 || y->n() <= 0) continue;
    const double ra = static_cast<double>(x->c()) / x->n(),
                 rb = static_cast<double>(y->c()) / y->n();
    var += ra * (1 - ra) / std::max(1, x->n() - 1) + rb * (1 - rb) / std::max(1, y->n() - 1);
    ++problems;
  }
  return problems == 0 ? -1 : Mde80(alpha, std::sqrt(var) / problems);
}

// Exact sign-flip permutation p of the pass@1 differences (multiples of 1/lcm(n)); -1 when the
// common scale is too large.
double PermutationP(const ProblemPairs& shared) {
  int64_t scale = CommonScale(shared, 1000000);
  if (scale <= 0) return -1;
  std::vector<int64_t> ints;
  for (const auto& [x, y] : shared) {
    if (x->n() <= 0 || y->n() <= 0) continue;
    ints.push_back(y->c() * (scale / y->n()) - x->c() * (scale / x->n()));
  }
  return SignFlipPermutationP(ints);
}

void AddKComparison(int k, const ProblemPairs& shared, const CompareOptions& options,
                    v1::Comparison* out) {
  const double alpha = options.alpha;
  const std::string key = std::to_string(k);
  std::vector<double> deltas;
  double sum_a = 0, sum_b = 0;
  int better = 0, worse = 0, ties = 0;
  for (const auto& d : out->problems()) {
    auto it = d.delta().find(key);
    if (it == d.delta().end()) continue;
    deltas.push_back(it->second);
    sum_a += d.a_pass_at().at(key);
    sum_b += d.b_pass_at().at(key);
    if (it->second > 1e-12) {
      ++better;
    } else if (it->second < -1e-12) {
      ++worse;
    } else {
      ++ties;
    }
  }
  if (deltas.empty()) return;
  v1::KComparison* kc = out->add_ks();
  kc->set_k(k);
  kc->set_problems(static_cast<int>(deltas.size()));
  kc->set_a(sum_a / deltas.size());
  kc->set_b(sum_b / deltas.size());
  kc->set_delta(kc->b() - kc->a());
  BootstrapOptions bootstrap;
  bootstrap.resamples = options.bootstrap_resamples;
  Interval ci = BootstrapMeanInterval(deltas, bootstrap);
  kc->mutable_delta_ci95()->set_low(ci.low);
  kc->mutable_delta_ci95()->set_high(ci.high);
  kc->set_better(better);
  kc->set_worse(worse);
  kc->set_ties(ties);
  kc->set_sign_test_p(SignTestP(better, worse));
  kc->set_permutation_p(k == 1 ? PermutationP(shared) : -1);
  double sd = 0;
  const double mean = kc->delta();
  for (double d : deltas) sd += (d - mean) * (d - mean);
  sd = deltas.size() > 1 ? std::sqrt(sd / (deltas.size() - 1)) : 0;
  kc->set_mde(deltas.size() > 1 ? Mde80(alpha, sd / std::sqrt(deltas.size())) : -1);
  kc->set_mde_this_problem_set(k == 1 ? MdeThisProblemSet(shared, alpha) : -1);
}

std::string Conclusion(const v1::Comparison& out, const v1::KComparison& kc,
                       const CompareOptions& options) {
  const double p = DecisiveP(out, 1);
  const std::string test = kc.permutation_p() >= 0 ? "exact permutation test" : "sign test";
  if (p < options.alpha)
    return fmt::format("{} is {} than {} on pass@1 by {:+.4f} ({}, p = {:.4g})", options.label_b,
                       kc.delta() > 0 ? "better" : "worse", options.label_a, kc.delta(), test, p);
  // "Not significant" alone would claim more than the evaluation can see.
  return fmt::format(
      "no significant difference on pass@1 between {} and {} (delta {:+.4f}, {}, p = {:.4g}); "
      "minimum detectable effect at 80% power: {} over problems like these, {} on this problem "
      "set (evald plan for the samples a smaller one needs)",
      options.label_a, options.label_b, kc.delta(), test, p, FormatMde(kc.mde()),
      FormatMde(kc.mde_this_problem_set()));
}

}  // namespace

std::string FormatMde(double mde) {
  return mde < 0 ? std::string("n/a") : fmt::format("{:.4f}", mde);
}

Status SameProblemSet(const v1::EvalReport& a, const v1::EvalReport& b) {
  // Reports from before the task was recorded say nothing: spec-to-rtl was the only task then.
  auto task = [](const v1::EvalReport& r) { return r.task().empty() ? "spec-to-rtl" : r.task(); };
  if (task(a) != task(b))
    return Status::InvalidArgument("the two reports grade different problem sets (" + task(a) +
                                   " and " + task(b) +
                                   "): problems of one name in two benchmarks or tasks are not "
                                   "the same problem, so they are not compared");
  // Two versions of one benchmark (or an edited copy): the same names, other problems.
  const std::string& da = a.benchmark().problems_sha256();
  const std::string& db = b.benchmark().problems_sha256();
  if (!da.empty() && !db.empty() && da != db)
    return Status::InvalidArgument(
        "the two reports grade different problem sets (" + task(a) + " with problems digest " +
        da.substr(0, 12) + " and " + db.substr(0, 12) +
        "): the same names with other prompts, references or testbenches are not compared");
  return Status::Ok();
}

v1::Comparison CompareReports(const v1::EvalReport& a, const v1::EvalReport& b,
                              const CompareOptions& options) {
  v1::Comparison out;
  out.set_a(options.label_a);
  out.set_b(options.label_b);
  out.set_alpha(options.alpha);
  if (a.has_serving()) *out.mutable_a_serving() = a.serving();
  if (b.has_serving()) *out.mutable_b_serving() = b.serving();
  if (a.summary().synthesis().samples() > 0) *out.mutable_a_synthesis() = a.summary().synthesis();
  if (b.summary().synthesis().samples() > 0) *out.mutable_b_synthesis() = b.summary().synthesis();
  const ProblemPairs shared = SharedProblems(a, b, &out);
  for (const auto& [x, y] : shared) AddProblemDelta(*x, *y, options.ks, &out);
  for (int k : options.ks) AddKComparison(k, shared, options, &out);
  for (const auto& kc : out.ks())
    if (kc.k() == 1) out.set_conclusion(Conclusion(out, kc, options));
  return out;
}

double DecisiveP(const v1::Comparison& comparison, int k) {
  for (const auto& kc : comparison.ks()) {
    if (kc.k() == k) return kc.permutation_p() >= 0 ? kc.permutation_p() : kc.sign_test_p();
  }
  return -1;
}

}  // namespace evald
