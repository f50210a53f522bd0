#include "evald/runs/scoring.h"

#include <cmath>
#include <map>
#include <string>

#include "evald/metrics/bootstrap.h"
#include "evald/metrics/pass_at_k.h"

namespace evald {

void ComputeMetrics(const std::vector<int>& ks, v1::EvalReport* report) {
  std::map<std::string, v1::ProblemResult> by_problem;
  std::map<std::string, bool> gradable;
  for (const auto& c : report->calibration()) gradable[c.problem()] = c.gradable();
  auto* summary = report->mutable_summary();
  summary->clear_categories();
  for (const auto& s : report->samples()) {
    auto& p = by_problem[s.problem()];
    p.set_problem(s.problem());
    p.set_n(p.n() + 1);
    if (s.passed()) p.set_c(p.c() + 1);
    if (s.benchmark_verdict() == ".") p.set_benchmark_c(p.benchmark_c() + 1);
    (*p.mutable_categories())[s.verdict()]++;
    (*summary->mutable_categories())[s.verdict()]++;
  }
  report->clear_problems();
  std::vector<ProblemCounts> all, graded;
  double bench_rate_sum = 0;
  for (auto& [name, p] : by_problem) {
    auto it = gradable.find(name);
    p.set_gradable(it == gradable.end() || it->second);
    for (const auto& c : report->calibration())
      if (c.problem() == name) p.set_note(c.note());
    for (int k : ks) {
      if (auto v = PassAtK(p.n(), p.c(), k)) (*p.mutable_pass_at())[std::to_string(k)] = *v;
    }
    all.push_back({p.n(), p.c()});
    if (p.gradable()) graded.push_back({p.n(), p.c()});
    // sv-iv-analyze: int((npass/nsamples)*100) per problem, averaged.
    bench_rate_sum += std::floor(static_cast<double>(p.benchmark_c()) / p.n() * 100.0);
    *report->add_problems() = p;
  }
  summary->set_problems(static_cast<int>(by_problem.size()));
  summary->set_samples(report->samples_size());
  summary->set_gradable_problems(static_cast<int>(graded.size()));
  summary->set_benchmark_pass_rate(by_problem.empty() ? 0 : bench_rate_sum / by_problem.size());
  summary->clear_pass_at();
  summary->clear_ci95();
  summary->clear_gradable_pass_at();
  for (int k : ks) {
    std::string key = std::to_string(k);
    std::vector<double> values;
    for (const auto& pc : all)
      if (auto v = PassAtK(pc.n, pc.c, k)) values.push_back(*v);
    if (values.empty()) continue;
    double mean = 0;
    for (double v : values) mean += v;
    mean /= values.size();
    (*summary->mutable_pass_at())[key] = mean;
    Interval ci = BootstrapMeanInterval(values);
    v1::ConfidenceInterval ci_proto;
    ci_proto.set_low(ci.low);
    ci_proto.set_high(ci.high);
    (*summary->mutable_ci95())[key] = ci_proto;
    if (auto g = MeanPassAtK(graded, k)) (*summary->mutable_gradable_pass_at())[key] = *g;
  }
}

}  // namespace evald
