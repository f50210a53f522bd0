// A run's drift (RunSpec.drift): once its samples are graded, how far the run's GGUF checkpoint
// drifts from a base checkpoint of the same model, teacher-forced on the run's own prompts -
// each problem's first generated sample after the prompt the model was given, or the
// references - and kept with the run (Run.drift, its report's drift), beside its pass@k.
#pragma once

#include "base/cancel_token.h"
#include "base/status.h"
#include "datasets/dataset.h"
#include "evald/proto/records.pb.h"
#include "evald/runs/operator_policy.h"

namespace evald {

class Store;

// At creation: drift needs a core run of a gguf checkpoint and a gguf base checkpoint (a
// registered one: the request names no file); completions default to "samples".
Status NormalizeDriftSpec(const v1::Checkpoint& checkpoint, const v1::Checkpoint& base,
                          v1::RunSpec* spec);

// Measures it. Both files are checked against the operator's policy again; `cancel` stops it
// between problems.
StatusOr<v1::DriftReport> MeasureRunDrift(const Store& store, const v1::Run& run,
                                          const Dataset& dataset, const OperatorPolicy& policy,
                                          const CancelToken* cancel);

}  // namespace evald
