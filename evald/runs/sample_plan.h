// The plan stage of the one run pipeline: which samples a run grades. Uploaded samples are
// matched to the dataset's problems and given their indices (stated, or next in file order per
// problem); the code of each is extracted by the benchmark's rules. `evald eval`, `evald run`
// and the daemon all plan through here, so a samples file means the same everywhere.
#pragma once

#include <string>
#include <vector>

#include "datasets/dataset.h"
#include "evald/proto/eval.pb.h"
#include "evald/samples/samples_reader.h"

namespace evald {

struct PlannedSample {
  const Problem* problem = nullptr;
  int index = 0;
  const SampleRecord* record = nullptr;  // the line it came from (owned by the SamplesFile)
};

struct SamplePlan {
  std::vector<PlannedSample> samples;
  // Lines the plan refused (unknown problem, an index given twice), in file order.
  std::vector<v1::InputError> errors;
};

SamplePlan PlanUploadedSamples(const Dataset& dataset, const SamplesFile& file);

// The code a sample is graded as: `code` given is taken as is, a completion is extracted.
// Fills problem, index, line, extraction and code_sha256 of `result`; returns the code.
std::string ExtractSample(Task task, const Problem& problem, const SampleRecord& record, int index,
                          v1::SampleResult* result);

// Extracts a raw completion's code into `result` (extraction, code_sha256); returns the code.
std::string ExtractCompletion(Task task, const Problem& problem, const std::string& completion,
                              v1::SampleResult* result);

}  // namespace evald
