// A run's report (v1::EvalReport), the same fields whoever ran it: `evald eval` from the
// pipeline's facts, `evald run` and the daemon from the stored run. Samples are scored here
// (scoring.h) and the summary carries what the run did (simulations, cache hits, wall time).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "datasets/dataset.h"
#include "evald/proto/eval.pb.h"
#include "evald/proto/records.pb.h"
#include "evald/runs/run_pipeline.h"

namespace evald {

struct ReportHeader {
  std::string dataset, task;
  std::optional<v1::BenchmarkIdentity> benchmark;
  std::vector<int> ks;
  v1::GradingSettings grading;  // as it took effect
  std::string simulator_version, sandbox_layers;
  std::vector<v1::ProblemCalibration> calibrations;
  std::vector<v1::InputError> input_errors;  // as kept (CapInputErrors)
  int input_errors_total = 0;                // found, kept or not
  std::optional<v1::ServingMetrics> serving;
  std::optional<v1::PromptSettings> prompt;
  std::optional<v1::DriftReport> drift;  // what RunSpec.drift measured
  int simulations = 0, cache_hits = 0;
  double wall_seconds = 0;
};

// The benchmark `dataset` holds, as reports and runs record it.
v1::BenchmarkIdentity BenchmarkOf(const Dataset& dataset);

// What the pipeline learned about a run over `dataset`.
ReportHeader HeaderOfFacts(const Dataset& dataset, const std::vector<int>& ks,
                           const RunFacts& facts);
// What a stored run recorded.
ReportHeader HeaderOfRun(const v1::Run& run);

v1::EvalReport BuildReport(const ReportHeader& header, std::vector<v1::SampleResult> samples);

}  // namespace evald
