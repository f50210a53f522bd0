#include "evald/metrics/power_plan.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <numeric>
#include <vector>

#include "evald/metrics/power.h"

namespace evald {

namespace {

struct Rates {
  std::vector<double> a, b;
  std::vector<int> n_a, n_b;
};

// Per-problem pass@1 (c / n) of the baseline, and of the other run on the problems both have.
Rates RatesOf(const v1::EvalReport& a, const v1::EvalReport* b) {
  std::map<std::string, const v1::ProblemResult*> other;
  if (b)
    for (const auto& p : b->problems()) other[p.problem()] = &p;
  Rates r;
  for (const auto& p : a.problems()) {
    if (p.n() <= 0) continue;
    const v1::ProblemResult* q = nullptr;
    if (b) {
      auto it = other.find(p.problem());
      if (it == other.end() || it->second->n() <= 0) continue;
      q = it->second;
    }
    r.a.push_back(static_cast<double>(p.c()) / p.n());
    r.n_a.push_back(p.n());
    if (q) {
      r.b.push_back(static_cast<double>(q->c()) / q->n());
      r.n_b.push_back(q->n());
    }
  }
  return r;
}

double MeanOf(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

int MedianN(std::vector<int> n) {
  if (n.empty()) return 20;
  std::nth_element(n.begin(), n.begin() + n.size() / 2, n.end());
  return n[n.size() / 2];
}

v1::PlanAnswer Answer(const PowerModel& model, PlanQuestion q, double delta, int n,
                      int simulations) {
  v1::PlanAnswer a;
  a.set_question(PlanQuestionName(q));
  a.set_test(q == PlanQuestion::kThisProblemSet
                 ? "z-test of the mean per-problem difference, binomial standard error"
                 : "paired test over problems (t-test; evald compare's sign-flip permutation "
                   "test is its exact form)");
  const int needed = SamplesNeeded(model, q, delta);
  a.set_samples_needed(needed);
  if (needed > 0) {
    a.set_power_at_needed(ClosedFormPower(model, q, delta, needed));
    a.set_power_at_needed_simulated(SimulatePower(model, q, delta, needed, simulations));
  }
  a.set_n(n);
  const double mde = MinimumDetectableEffect(model, q, n);
  a.set_mde(std::isnan(mde) ? -1 : mde);
  a.set_power_at_n(ClosedFormPower(model, q, delta, n));
  a.set_power_at_n_simulated(SimulatePower(model, q, delta, n, simulations, 2));
  a.set_mde_floor(MinimumDetectableEffectFloor(model, q));
  const int pct = static_cast<int>(std::lround(model.power * 100));
  if (needed > 0) {
    a.set_answer(fmt::format(
        "{}: {} samples per problem detect a difference of {:.3f} in pass@1 with {}% power; "
        "with n = {} the smallest detectable difference is {:.3f}.",
        PlanQuestionName(q), needed, delta, pct, n, a.mde()));
  } else {
    a.set_answer(fmt::format(
        "{}: no number of samples detects {:.3f} with {}% power: the problems' own differences "
        "(tau {:.3f}) leave a floor of {:.3f} with {} problems; more problems would help.",
        PlanQuestionName(q), delta, pct, model.tau, a.mde_floor(), model.baseline.size()));
  }
  return a;
}

}  // namespace

StatusOr<v1::PowerPlan> MakePowerPlan(const PlanInputs& in) {
  if (!(in.alpha > 0 && in.alpha < 0.5))
    return Status::InvalidArgument("alpha must be in (0, 0.5)");
  if (!(in.power > 0.05 && in.power < 1))
    return Status::InvalidArgument("power must be in (0.05, 1)");
  if (in.simulations < 0 || in.simulations > 100000)
    return Status::InvalidArgument("simulations must be 0..100000");
  v1::PowerPlan plan;
  PowerModel model;
  model.alpha = in.alpha;
  model.power = in.power;
  double delta = in.delta;
  int n = in.n;
  if (in.a) {
    Rates r = RatesOf(*in.a, in.b);
    if (r.a.size() < 2)
      return Status::InvalidArgument("the report has fewer than 2 problems to plan over");
    if (r.a.size() > static_cast<size_t>(kMaxPlanProblems))
      return Status::InvalidArgument("more than " + std::to_string(kMaxPlanProblems) +
                                     " problems to plan over");
    model.baseline = r.a;
    plan.set_baseline_source(in.b ? "the first report's per-problem rates, on the problems both "
                                    "reports have"
                                  : "the report's per-problem rates");
    if (in.b && delta == 0) delta = MeanOf(r.b) - MeanOf(r.a);
    if (in.b && !in.tau) {
      model.tau = EstimateTau(r.a, r.n_a, r.b, r.n_b);
      plan.set_tau_source(
          "estimated from the two reports (variance of the per-problem "
          "differences less their sampling variance)");
    }
    if (n == 0) n = MedianN(r.n_a);
  } else {
    if (!(in.pass_at_1 > 0 && in.pass_at_1 < 1))
      return Status::InvalidArgument("give a report or a pass@1 in (0, 1)");
    if (in.problems < 2 || in.problems > kMaxPlanProblems)
      return Status::InvalidArgument("problems must be 2.." + std::to_string(kMaxPlanProblems));
    model.baseline = HypotheticalRates(in.pass_at_1, in.problems, in.logit_sd);
    plan.set_baseline_source(fmt::format(
        "hypothetical: {} problems, per-problem rates logit-normal with logit SD {} and mean {}",
        in.problems, in.logit_sd, in.pass_at_1));
    if (n == 0) n = 20;
  }
  if (plan.tau_source().empty()) {
    model.tau = in.tau.value_or(kDefaultTau);
    plan.set_tau_source(in.tau ? "given" : "default (real model pairs here: 0.10-0.24)");
  }
  if (!(model.tau >= 0 && model.tau <= 1)) return Status::InvalidArgument("tau must be 0..1");
  delta = std::fabs(delta);
  if (!(delta > 0 && delta < 1)) return Status::InvalidArgument("delta must be in (0, 1)");
  if (n < 1 || n > 100000) return Status::InvalidArgument("n must be 1..100000");
  plan.set_baseline_pass_at_1(MeanOf(model.baseline));
  plan.set_problems(static_cast<int>(model.baseline.size()));
  plan.set_delta(delta);
  plan.set_alpha(model.alpha);
  plan.set_power(model.power);
  plan.set_tau(model.tau);
  plan.set_simulations(in.simulations);
  for (PlanQuestion q : {PlanQuestion::kThisProblemSet, PlanQuestion::kProblemsLikeThese})
    *plan.add_answers() = Answer(model, q, delta, n, in.simulations);
  plan.set_method(
      "Closed form: the test statistic is normal; this problem set: Var = sum_i (p_i(1-p_i) + "
      "q_i(1-q_i)) / (n P^2); problems like these: Var = (tau_eff^2 + mean_i(p_i(1-p_i) + "
      "q_i(1-q_i)) / n) / P. Power = Phi(|delta|/SE - z_(1-alpha/2)) + Phi(-|delta|/SE - "
      "z_(1-alpha/2)); n is the smallest with power >= the target; the MDE the smallest "
      "difference with it. Checked by simulating binomial counts for both checkpoints and "
      "applying each question's test.");
  for (const char* a :
       {"the baseline's per-problem rates p_i are the truth (from the report or the stated "
        "hypothetical distribution)",
        "the other checkpoint's rates: q_i = clip(p_i + shift + tau z_i, 0, 1), z_i standard "
        "normal, the shift chosen so that mean(q_i - p_i) = delta",
        "both checkpoints are evaluated with n samples on every problem; samples are independent",
        "differences are two-sided; the MDE is given for upward differences"})
    plan.add_assumptions(a);
  return plan;
}

void PrintPowerPlan(const v1::PowerPlan& plan, std::ostream& out) {
  out << fmt::format(
      "power plan: baseline pass@1 {:.3f} over {} problems, target difference {:.3f}, alpha {}, "
      "power {}\n  baseline: {}\n  tau (SD of the true per-problem differences): {:.3f} ({})\n\n",
      plan.baseline_pass_at_1(), plan.problems(), plan.delta(), plan.alpha(), plan.power(),
      plan.baseline_source(), plan.tau(), plan.tau_source());
  for (const auto& a : plan.answers()) {
    out << "  " << a.answer() << "\n";
    out << fmt::format("    test: {}\n", a.test());
    if (a.samples_needed() > 0)
      out << fmt::format("    at n = {}: power {:.3f} (closed form), {:.3f} (simulated, {} runs)\n",
                         a.samples_needed(), a.power_at_needed(), a.power_at_needed_simulated(),
                         plan.simulations());
    out << fmt::format(
        "    at n = {}: power for {:.3f} is {:.3f} (closed form), {:.3f} (simulated)", a.n(),
        plan.delta(), a.power_at_n(), a.power_at_n_simulated());
    if (a.mde_floor() > 0) out << fmt::format("; floor as n grows: {:.3f}", a.mde_floor());
    out << "\n\n";
  }
  out << "  method: " << plan.method() << "\n  assumptions:\n";
  for (const auto& a : plan.assumptions()) out << "    - " << a << "\n";
}

}  // namespace evald
