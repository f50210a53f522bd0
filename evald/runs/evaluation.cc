#include "evald/runs/evaluation.h"

#include <spdlog/spdlog.h>

#include "evald/runs/grading_session.h"
#include "evald/runs/grading_settings.h"
#include "evald/runs/memory_sink.h"
#include "evald/runs/report_builder.h"
#include "evald/runs/run_pipeline.h"
#include "evald/runs/sample_plan.h"
#include "harness/failure_category.h"

namespace evald {

namespace {

// The planned samples as the pipeline takes them: extracted, in input order.
std::vector<v1::StoredSample> PlannedSamples(const Dataset& dataset, const SamplePlan& plan) {
  std::vector<v1::StoredSample> samples(plan.samples.size());
  for (size_t i = 0; i < plan.samples.size(); ++i) {
    const PlannedSample& p = plan.samples[i];
    v1::StoredSample& s = samples[i];
    s.set_problem(p.problem->name);
    s.set_index(p.index);
    s.set_line(p.record->line);
    s.set_generated(true);
    s.set_code(ExtractSample(dataset.task(), *p.problem, *p.record, p.index, s.mutable_result()));
  }
  return samples;
}

}  // namespace

StatusOr<v1::EvalReport> Evaluate(const Dataset& dataset, const SamplesFile& file,
                                  const EvalOptions& options) {
  RunPlan plan;
  plan.dataset = &dataset;
  plan.grading = options.grading;
  EVALD_RETURN_IF_ERROR(NormalizeGradingSettings(&plan.grading));
  const SamplePlan planned = PlanUploadedSamples(dataset, file);
  std::vector<v1::StoredSample> samples = PlannedSamples(dataset, planned);
  for (auto& s : samples) plan.samples.push_back(&s);
  MemorySink sink(static_cast<int>(samples.size()), options.progress);
  auto facts = ExecuteRunPlan(plan, options.resources, sink);
  if (!facts.ok()) return facts.status();

  ReportHeader header = HeaderOfFacts(dataset, options.ks, *facts);
  // Input errors: the reader's, then the plan's, capped, with the total in the summary.
  google::protobuf::RepeatedPtrField<v1::InputError> errors;
  for (const auto& e : file.errors) *errors.Add() = e;
  for (const auto& e : planned.errors) *errors.Add() = e;
  header.input_errors_total = static_cast<int>(errors.size() + file.errors_dropped);
  CapInputErrors(&errors, file.errors_dropped);
  header.input_errors.assign(errors.begin(), errors.end());
  std::vector<v1::SampleResult> results;
  int internal_errors = 0;
  for (auto& s : samples) {
    if (s.result().verdict() == std::string(1, category::kInternalError)) ++internal_errors;
    results.push_back(std::move(*s.mutable_result()));
  }
  if (internal_errors > 0)
    spdlog::error("{} sample(s) could not be run (verdict '!'); see their detail", internal_errors);
  return BuildReport(header, std::move(results));
}

StatusOr<v1::DatasetCheckReport> CheckDataset(const Dataset& dataset, const EvalOptions& options) {
  v1::GradingSettings settings = options.grading;
  settings.mutable_cross_checks()->set_formal(false);
  settings.mutable_cross_checks()->set_synthesis(false);
  EVALD_RETURN_IF_ERROR(NormalizeGradingSettings(&settings));
  GradingResources resources = options.resources;
  resources.store = nullptr;  // a check always runs every reference
  resources.remote = {};      // references are calibrated where the session runs
  std::vector<const Problem*> problems;
  for (const auto& p : dataset.problems()) problems.push_back(&p);
  auto session = GradingSession::Open(settings, resources, dataset, problems);
  if (!session.ok()) return session.status();
  v1::DatasetCheckReport out;
  out.set_dataset(dataset.folder());
  out.set_task(std::string(TaskName(dataset.task())));
  *out.mutable_benchmark() = BenchmarkOf(dataset);
  out.set_simulator(settings.simulator());
  out.set_simulator_version((*session)->simulator_version());
  for (const Problem* p : problems) {
    v1::ProblemCalibration c = (*session)->calibration_records().at(p->name);
    c.clear_simulate_limit_s();
    c.clear_simulate_limit_ms();
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
