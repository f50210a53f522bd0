#include "evald/runs/evaluation.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <set>

#include "evald/runs/cross_check_settings.h"
#include "evald/runs/grading_session.h"
#include "evald/runs/sample_plan.h"
#include "evald/runs/scoring.h"
#include "evald/runs/verdict_fields.h"
#include "harness/failure_category.h"

namespace evald {

GradingOptions GradingOptionsOf(const EvalOptions& options) {
  GradingOptions g;
  g.simulator = options.simulator;
  g.auto_simulator = options.auto_simulator;
  g.jobs = options.jobs;
  g.sandbox = options.sandbox;
  g.simulate_timeout_ms = options.simulate_timeout_ms;
  g.store = options.store;
  g.exact_mismatch_counts = options.exact_mismatch_counts;
  g.cross = options.cross;
  g.executor = options.executor;
  return g;
}

namespace {

v1::EvalReport NewReport(const Dataset& dataset, const EvalOptions& options) {
  v1::EvalReport report;
  report.set_dataset(dataset.folder());
  report.set_task(std::string(TaskName(dataset.task())));
  report.set_simulator(options.auto_simulator ? "auto"
                                              : std::string(SimulatorName(options.simulator)));
  report.set_evald_version(EVALD_VERSION);
  for (int k : options.ks) report.add_k(k);
  report.set_exact_mismatch_counts(options.exact_mismatch_counts);
  *report.mutable_cross_checks() = CrossCheckSettingsOf(options.cross);
  return report;
}

// Input errors: the reader's, then the plan's, capped, with the total in the summary.
void RecordInputErrors(const SamplesFile& samples, const SamplePlan& plan, v1::EvalReport* report) {
  for (const auto& e : samples.errors) *report->add_input_errors() = e;
  for (const auto& e : plan.errors) *report->add_input_errors() = e;
  const int64_t total = report->input_errors_size() + samples.errors_dropped;
  CapInputErrors(report->mutable_input_errors(), samples.errors_dropped);
  report->mutable_summary()->set_input_errors(static_cast<int32_t>(total));
}

std::vector<const Problem*> ProblemsOf(const SamplePlan& plan) {
  std::vector<const Problem*> problems;
  std::set<const Problem*> seen;
  for (const auto& s : plan.samples)
    if (seen.insert(s.problem).second) problems.push_back(s.problem);
  return problems;
}

}  // namespace

StatusOr<v1::EvalReport> Evaluate(const Dataset& dataset, const SamplesFile& samples,
                                  const EvalOptions& options) {
  auto started = std::chrono::steady_clock::now();
  v1::EvalReport report = NewReport(dataset, options);
  const SamplePlan plan = PlanUploadedSamples(dataset, samples);
  RecordInputErrors(samples, plan, &report);

  GradingOptions g = GradingOptionsOf(options);
  g.executor.dataset_folder = dataset.folder();
  g.executor.task = std::string(TaskName(dataset.task()));
  auto session = GradingSession::Open(g, ProblemsOf(plan));
  if (!session.ok()) return session.status();
  GradingSession& grading = **session;
  report.set_sandbox_layers(grading.sandbox_layers());
  report.set_simulator_version(grading.simulator_version());
  *report.mutable_cross_checks() = CrossCheckSettingsOf(grading.cross_checks());
  report.mutable_cross_checks()->set_yosys_version(grading.yosys_version());
  for (const auto& [name, record] : grading.calibration_records())
    *report.add_calibration() = record;

  // Results land in input order whatever order the simulations finish in.
  std::vector<v1::SampleResult> results(plan.samples.size());
  std::atomic<int> graded{0};
  const int total = static_cast<int>(plan.samples.size());
  for (size_t i = 0; i < plan.samples.size(); ++i) {
    const PlannedSample& s = plan.samples[i];
    std::string code = ExtractSample(dataset.task(), *s.problem, *s.record, s.index, &results[i]);
    const Problem* problem = s.problem;
    grading.Grade(*problem, std::move(code), {"", s.index}, [&, i, problem](GradeOutcome& o) {
      results[i].MergeFrom(VerdictFields(o.verdict));
      results[i].set_simulator(std::string(grading.SimulatorFor(*problem)));
      results[i].set_deduplicated(o.source == VerdictSource::kDuplicate);
      const int d = ++graded;
      if (options.progress) options.progress(d, total);
    });
  }
  grading.Wait();

  int internal_errors = 0;
  for (auto& r : results) {
    if (r.verdict() == std::string(1, category::kInternalError)) ++internal_errors;
    *report.add_samples() = std::move(r);
  }
  if (internal_errors > 0)
    spdlog::error("{} sample(s) could not be run (verdict '!'); see their detail", internal_errors);
  report.mutable_summary()->set_simulations(grading.simulations() +
                                            grading.calibrations_simulated());
  report.mutable_summary()->set_cache_hits(grading.cache_hits());
  ComputeMetrics(options.ks, &report);
  report.mutable_summary()->set_wall_seconds(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return report;
}

StatusOr<v1::DatasetCheckReport> CheckDataset(const Dataset& dataset, const EvalOptions& options) {
  v1::DatasetCheckReport out;
  out.set_dataset(dataset.folder());
  out.set_task(std::string(TaskName(dataset.task())));
  out.set_simulator(options.auto_simulator ? "auto"
                                           : std::string(SimulatorName(options.simulator)));
  std::vector<const Problem*> problems;
  for (const auto& p : dataset.problems()) problems.push_back(&p);
  GradingOptions g = GradingOptionsOf(options);
  g.store = nullptr;  // a check always runs every reference
  g.cross = CrossCheckOptions{};
  g.executor = ExecutorOptions{};  // references are calibrated where the session runs
  auto session = GradingSession::Open(g, problems);
  if (!session.ok()) return session.status();
  out.set_simulator_version((*session)->simulator_version());
  for (const Problem* p : problems) {
    v1::ProblemCalibration c = (*session)->calibration_records().at(p->name);
    c.clear_simulate_limit_s();
    if (!c.gradable()) {
      out.set_ungradable(out.ungradable() + 1);
    } else {
      out.set_gradable(out.gradable() + 1);
      if (c.testbench_timeout()) out.set_special(out.special() + 1);
    }
    *out.add_problems() = std::move(c);
  }
  return out;
}

}  // namespace evald
