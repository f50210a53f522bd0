#include "evald/runs/report_builder.h"

#include "evald/runs/scoring.h"

namespace evald {

v1::BenchmarkIdentity BenchmarkOf(const Dataset& dataset) {
  v1::BenchmarkIdentity b;
  b.set_name(std::string(BenchmarkName(dataset.task())));
  b.set_version(std::string(BenchmarkVersion(dataset.task())));
  b.set_problems(static_cast<int>(dataset.problems().size()));
  b.set_problems_sha256(dataset.problems_digest());
  return b;
}

ReportHeader HeaderOfFacts(const Dataset& dataset, const std::vector<int>& ks,
                           const RunFacts& facts) {
  ReportHeader h;
  h.dataset = dataset.folder();
  h.task = std::string(TaskName(dataset.task()));
  h.benchmark = BenchmarkOf(dataset);
  h.ks = ks;
  h.grading = facts.grading;
  h.simulator_version = facts.simulator_version;
  h.sandbox_layers = facts.sandbox_layers;
  for (const auto& [name, record] : facts.calibrations) h.calibrations.push_back(record);
  h.simulations = facts.simulations;
  h.cache_hits = facts.cache_hits;
  h.wall_seconds = facts.wall_seconds;
  return h;
}

ReportHeader HeaderOfRun(const v1::Run& run) {
  ReportHeader h;
  h.dataset = run.spec().dataset();
  h.task = run.spec().task();
  if (run.has_benchmark()) h.benchmark = run.benchmark();
  h.ks.assign(run.spec().k().begin(), run.spec().k().end());
  h.grading = run.spec().grading();
  h.simulator_version = run.simulator_version();
  h.sandbox_layers = run.sandbox_layers();
  h.calibrations.assign(run.calibration().begin(), run.calibration().end());
  h.input_errors.assign(run.input_errors().begin(), run.input_errors().end());
  h.input_errors_total = std::max(run.input_errors_total(), run.input_errors_size());
  if (run.has_serving()) h.serving = run.serving();
  if (!run.spec().checkpoint_id().empty()) h.prompt = run.spec().prompt();
  h.simulations = run.simulations();
  h.cache_hits = run.cache_hits();
  h.wall_seconds = run.grading_seconds();
  if (run.has_drift()) h.drift = run.drift();
  return h;
}

v1::EvalReport BuildReport(const ReportHeader& h, std::vector<v1::SampleResult> samples) {
  v1::EvalReport report;
  report.set_dataset(h.dataset);
  report.set_task(h.task);
  if (h.benchmark) *report.mutable_benchmark() = *h.benchmark;
  report.set_evald_version(EVALD_VERSION);
  for (int k : h.ks) report.add_k(k);
  *report.mutable_grading() = h.grading;
  report.set_simulator_version(h.simulator_version);
  report.set_sandbox_layers(h.sandbox_layers);
  for (const auto& c : h.calibrations) *report.add_calibration() = c;
  for (const auto& e : h.input_errors) *report.add_input_errors() = e;
  if (h.serving) *report.mutable_serving() = *h.serving;
  if (h.drift) *report.mutable_drift() = *h.drift;
  if (h.prompt) *report.mutable_prompt() = *h.prompt;
  for (auto& s : samples) *report.add_samples() = std::move(s);
  ComputeMetrics(h.ks, &report);
  v1::Summary* summary = report.mutable_summary();
  summary->set_input_errors(h.input_errors_total);
  summary->set_simulations(h.simulations);
  summary->set_cache_hits(h.cache_hits);
  summary->set_wall_seconds(h.wall_seconds);
  return report;
}

}  // namespace evald
