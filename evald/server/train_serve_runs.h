// The train-vs-serve report over a store's runs: the finished runs a filter selects (a label such
// as model=gemma-31b), named by checkpoint, run name or labels, with the categories of their
// dataset's problems. Used by GET /v1/reports/train-serve and `evald report train-serve --data`.
#pragma once

#include <string>

#include "base/status.h"
#include "evald/proto/compare.pb.h"
#include "evald/runs/dataset_registry.h"
#include "evald/server/run_records.h"

namespace evald {

// `baseline`: a run id among the selected ones ("" = the first by creation). Problem categories
// come from the datasets the runs name, as the registry knows them.
StatusOr<v1::TrainServeReport> TrainServeFromStore(const RunRecords& runs,
                                                   DatasetRegistry& datasets,
                                                   const RunFilter& filter,
                                                   const std::string& baseline,
                                                   const std::string& title);

}  // namespace evald
