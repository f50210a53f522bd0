// `evald dataset audit`: for every problem, the reference against itself and systematic mutants
// of it (harness/reference_mutants.h), each graded by simulation and checked formally with the
// counterexample replayed, through the one grading session. The share of formally different
// mutants a testbench passes tells users which problems' verdicts are weak.
#pragma once

#include <string>
#include <vector>

#include "datasets/dataset.h"
#include "evald/proto/eval.pb.h"
#include "evald/runs/evaluation.h"

namespace evald {

struct AuditOptions {
  EvalOptions eval;                   // settings (simulator, cross-check bounds), resources
  std::vector<std::string> problems;  // only these (default: all)
  size_t mutants_per_kind = 4;
};

StatusOr<v1::DatasetAuditReport> AuditDataset(const Dataset& dataset, const AuditOptions& options);

}  // namespace evald
