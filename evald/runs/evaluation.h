// `evald eval` and `evald dataset check` as a library. Evaluate runs the one pipeline
// (run_pipeline.h) over samples held in memory: plan (problems, indices) -> extract -> grade ->
// score -> report, the same report the daemon builds from its store (report_builder.h).
#pragma once

#include <functional>
#include <vector>

#include "datasets/dataset.h"
#include "evald/proto/eval.pb.h"
#include "evald/runs/grading_resources.h"
#include "evald/runs/run_progress.h"
#include "evald/samples/samples_reader.h"

namespace evald {

struct EvalOptions {
  v1::GradingSettings grading;  // normalised by Evaluate
  std::vector<int> ks = {1, 5};
  GradingResources resources;  // sandboxes, the optional store, where simulations run
  // Called as references are calibrated and samples get their verdicts. From worker threads.
  ProgressFn progress;
};

// Fails only when it cannot run at all (no sandbox, no simulator, settings out of range); bad
// sample lines are reported in the result and the rest is graded.
StatusOr<v1::EvalReport> Evaluate(const Dataset& dataset, const SamplesFile& samples,
                                  const EvalOptions& options);

// `evald dataset check`: every reference against its testbench, nothing taken from a cache.
StatusOr<v1::DatasetCheckReport> CheckDataset(const Dataset& dataset, const EvalOptions& options);

}  // namespace evald
