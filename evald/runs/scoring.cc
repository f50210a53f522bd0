#include "evald/runs/scoring.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "evald/metrics/bootstrap.h"
#include "evald/metrics/pass_at_k.h"

namespace evald {

namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Medians of the synthesis figures over the samples that have them.
v1::SynthesisSummary SynthesisMedians(const v1::EvalReport& report) {
  std::vector<double> cells, area, depth, area_ratio, cells_ratio, depth_ratio;
  for (const auto& s : report.samples()) {
    if (!s.has_synthesis() || !s.synthesis().problem().empty()) continue;
    cells.push_back(s.synthesis().cells());
    area.push_back(s.synthesis().area());
    depth.push_back(s.synthesis().depth());
    if (s.synthesis().area_ratio() > 0) area_ratio.push_back(s.synthesis().area_ratio());
    if (s.synthesis().cells_ratio() > 0) cells_ratio.push_back(s.synthesis().cells_ratio());
    if (s.synthesis().depth_ratio() > 0) depth_ratio.push_back(s.synthesis().depth_ratio());
  }
  v1::SynthesisSummary out;
  out.set_samples(static_cast<int>(cells.size()));
  out.set_median_cells(Median(cells));
  out.set_median_area(Median(area));
  out.set_median_depth(Median(depth));
  out.set_median_area_ratio(Median(area_ratio));
  out.set_median_cells_ratio(Median(cells_ratio));
  out.set_median_depth_ratio(Median(depth_ratio));
  return out;
}

// The mean of per-problem pass@k `values` under `key`, with its bootstrap interval over them.
void SetMeanAndInterval(const std::vector<double>& values, const std::string& key,
                        google::protobuf::Map<std::string, double>* means,
                        google::protobuf::Map<std::string, v1::ConfidenceInterval>* intervals) {
  if (values.empty()) return;
  double mean = 0;
  for (double v : values) mean += v;
  (*means)[key] = mean / values.size();
  const Interval ci = BootstrapMeanInterval(values);
  v1::ConfidenceInterval& out = (*intervals)[key];
  out.set_low(ci.low);
  out.set_high(ci.high);
}

// pass@k per design category, for the problems whose category the calibration recorded.
void ComputeCategoryScores(const std::vector<int>& ks, v1::EvalReport* report) {
  std::map<std::string, std::vector<const v1::ProblemResult*>> by_category;
  for (const auto& p : report->problems())
    if (!p.category().empty()) by_category[p.category()].push_back(&p);
  auto* scores = report->mutable_summary()->mutable_by_category();
  scores->clear();
  for (const auto& [category, problems] : by_category) {
    v1::CategoryScore& score = (*scores)[category];
    score.set_problems(static_cast<int>(problems.size()));
    for (int k : ks) {
      std::vector<double> values;
      for (const auto* p : problems)
        if (auto v = PassAtK(p->n(), p->c(), k)) values.push_back(*v);
      SetMeanAndInterval(values, std::to_string(k), score.mutable_pass_at(), score.mutable_ci95());
    }
  }
}

// With formal checks: strict pass@k (StrictPass), the cross-check counts per problem and
// overall, formal outcomes, synthesis medians.
void ComputeCrossCheckMetrics(const std::vector<int>& ks, v1::EvalReport* report) {
  std::map<std::string, v1::ProblemResult*> problems;
  for (auto& p : *report->mutable_problems()) {
    p.set_strict_c(0);
    p.set_formal_refuted(0);
    p.set_formal_proven_failures(0);
    p.set_formal_unverified(0);
    p.clear_strict_pass_at();
    problems[p.problem()] = &p;
  }
  auto* summary = report->mutable_summary();
  summary->clear_formal_outcomes();
  const bool formal = report->grading().cross_checks().formal();
  int refuted = 0, proven = 0, unverified = 0;
  for (const auto& s : report->samples()) {
    v1::ProblemResult* p = problems[s.problem()];
    if (formal ? StrictPass(s) : s.passed()) p->set_strict_c(p->strict_c() + 1);
    if (formal && UnverifiedPass(s))
      p->set_formal_unverified(p->formal_unverified() + 1), ++unverified;
    if (s.cross_check() == "refuted") p->set_formal_refuted(p->formal_refuted() + 1), ++refuted;
    if (s.cross_check() == "proven")
      p->set_formal_proven_failures(p->formal_proven_failures() + 1), ++proven;
    if (s.has_formal()) (*summary->mutable_formal_outcomes())[s.formal().outcome()]++;
  }
  summary->set_formal_refuted(refuted);
  summary->set_formal_proven_failures(proven);
  summary->set_formal_unverified(unverified);
  summary->clear_strict_pass_at();
  summary->clear_strict_ci95();
  for (int k : ks) {
    std::vector<double> values;
    for (auto& [name, p] : problems) {
      auto v = PassAtK(p->n(), p->strict_c(), k);
      if (!v) continue;
      (*p->mutable_strict_pass_at())[std::to_string(k)] = *v;
      values.push_back(*v);
    }
    SetMeanAndInterval(values, std::to_string(k), summary->mutable_strict_pass_at(),
                       summary->mutable_strict_ci95());
  }
  *summary->mutable_synthesis() = SynthesisMedians(*report);
}

}  // namespace

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
    for (const auto& c : report->calibration()) {
      if (c.problem() != name) continue;
      p.set_note(c.note());
      p.set_category(c.category());
    }
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
    SetMeanAndInterval(values, key, summary->mutable_pass_at(), summary->mutable_ci95());
    if (auto g = MeanPassAtK(graded, k)) (*summary->mutable_gradable_pass_at())[key] = *g;
  }
  ComputeCategoryScores(ks, report);
  if (report->grading().cross_checks().formal() || report->grading().cross_checks().synthesis())
    ComputeCrossCheckMetrics(ks, report);
}

bool StrictPass(const v1::SampleResult& s) {
  return s.passed() && s.has_formal() &&
         (s.formal().outcome() == "proven" || s.formal().outcome() == "bounded");
}

bool UnverifiedPass(const v1::SampleResult& s) {
  return s.passed() && !StrictPass(s) &&
         !(s.has_formal() && s.formal().outcome() == "counterexample");
}

StatusOr<v1::EvalReport> ReportForMetric(v1::EvalReport report, std::string_view metric) {
  if (metric == "simulation") return report;
  if (metric != "strict" && metric != "unverified")
    return Status::InvalidArgument("unknown metric '" + std::string(metric) +
                                   "' (expected simulation, strict or unverified)");
  if (!report.grading().cross_checks().formal())
    return Status::InvalidArgument(
        "the report has no formal checks (grade with --formal passes "
        "or all) and so no " +
        std::string(metric) + " metric");
  // unverified: pass@k of the passes formal could not judge, the part of a pass rate that
  // rests on the testbench alone.
  const bool strict = metric == "strict";
  for (auto& s : *report.mutable_samples())
    s.set_passed(strict ? StrictPass(s) : UnverifiedPass(s));
  ComputeMetrics({report.k().begin(), report.k().end()}, &report);
  return report;
}

}  // namespace evald
