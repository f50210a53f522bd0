#include "evald/metrics/run_comparison.h"

#include <fmt/format.h>

#include <map>
#include <numeric>

#include "evald/metrics/bootstrap.h"
#include "evald/metrics/paired_tests.h"
#include "evald/metrics/pass_at_k.h"

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

v1::Comparison CompareReports(const v1::EvalReport& a, const v1::EvalReport& b,
                              const CompareOptions& options) {
  v1::Comparison out;
  out.set_a(options.label_a);
  out.set_b(options.label_b);
  out.set_alpha(options.alpha);
  if (a.has_serving()) *out.mutable_a_serving() = a.serving();
  if (b.has_serving()) *out.mutable_b_serving() = b.serving();
  std::map<std::string, const v1::ProblemResult*> pa, pb;
  for (const auto& p : a.problems()) pa[p.problem()] = &p;
  for (const auto& p : b.problems()) pb[p.problem()] = &p;
  std::vector<std::pair<const v1::ProblemResult*, const v1::ProblemResult*>> shared;
  for (const auto& [name, p] : pa) {
    auto it = pb.find(name);
    if (it == pb.end()) {
      out.add_only_in_a(name);
    } else {
      shared.emplace_back(p, it->second);
    }
  }
  for (const auto& [name, p] : pb)
    if (!pa.count(name)) out.add_only_in_b(name);
  out.set_shared_problems(static_cast<int>(shared.size()));

  for (const auto& [x, y] : shared) {
    v1::ProblemDelta* d = out.add_problems();
    d->set_problem(x->problem());
    d->set_a_n(x->n());
    d->set_a_c(x->c());
    d->set_b_n(y->n());
    d->set_b_c(y->c());
    for (int k : options.ks) {
      auto va = PassAtK(x->n(), x->c(), k), vb = PassAtK(y->n(), y->c(), k);
      std::string key = std::to_string(k);
      if (va) (*d->mutable_a_pass_at())[key] = *va;
      if (vb) (*d->mutable_b_pass_at())[key] = *vb;
      if (va && vb) (*d->mutable_delta())[key] = *vb - *va;
    }
    if (x->c() == 0 && y->c() > 0) {
      d->set_flip("gained");
      out.add_gained(x->problem());
    } else if (x->c() > 0 && y->c() == 0) {
      d->set_flip("lost");
      out.add_lost(x->problem());
    }
  }

  for (int k : options.ks) {
    std::string key = std::to_string(k);
    std::vector<double> deltas;
    double sum_a = 0, sum_b = 0;
    int better = 0, worse = 0, ties = 0;
    for (const auto& d : out.problems()) {
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
    if (deltas.empty()) continue;
    v1::KComparison* kc = out.add_ks();
    kc->set_k(k);
    kc->set_problems(static_cast<int>(deltas.size()));
    kc->set_a(sum_a / deltas.size());
    kc->set_b(sum_b / deltas.size());
    kc->set_delta(kc->b() - kc->a());
    Interval ci = BootstrapMeanInterval(deltas);
    kc->mutable_delta_ci95()->set_low(ci.low);
    kc->mutable_delta_ci95()->set_high(ci.high);
    kc->set_better(better);
    kc->set_worse(worse);
    kc->set_ties(ties);
    kc->set_sign_test_p(SignTestP(better, worse));
    kc->set_permutation_p(-1);
    if (k == 1) {
      // pass@1 = c/n: differences are exact multiples of 1/lcm(n).
      int64_t scale = CommonScale(shared, 1000000);
      if (scale > 0) {
        std::vector<int64_t> ints;
        for (const auto& [x, y] : shared) {
          if (x->n() <= 0 || y->n() <= 0) continue;
          ints.push_back(y->c() * (scale / y->n()) - x->c() * (scale / x->n()));
        }
        kc->set_permutation_p(SignFlipPermutationP(ints));
      }
    }
  }

  for (const auto& kc : out.ks()) {
    if (kc.k() != 1) continue;
    double p = DecisiveP(out, 1);
    std::string test = kc.permutation_p() >= 0 ? "exact permutation test" : "sign test";
    if (p < options.alpha) {
      out.set_conclusion(fmt::format("{} is {} than {} on pass@1 by {:+.4f} ({}, p = {:.4g})",
                                     options.label_b, kc.delta() > 0 ? "better" : "worse",
                                     options.label_a, kc.delta(), test, p));
    } else {
      out.set_conclusion(fmt::format(
          "no significant difference on pass@1 between {} and {} (delta {:+.4f}, {}, p = {:.4g})",
          options.label_a, options.label_b, kc.delta(), test, p));
    }
  }
  return out;
}

double DecisiveP(const v1::Comparison& comparison, int k) {
  for (const auto& kc : comparison.ks()) {
    if (kc.k() == k) return kc.permutation_p() >= 0 ? kc.permutation_p() : kc.sign_test_p();
  }
  return -1;
}

}  // namespace evald
