// Reads a samples JSONL file: one JSON object a line with `problem` (or `task_id`) and
// `completion` (raw response) or `code` (extracted Verilog), optionally `index`. A bad line
// (malformed JSON, missing field, oversized) becomes an InputError naming the line; the rest of
// the file is still read.
#pragma once

#include <string>
#include <vector>

#include "evald/common/status.h"
#include "evald/proto/eval.pb.h"

namespace evald {

struct SampleRecord {
  int line = 0;
  std::string problem;
  int index = -1;         // -1: assigned in file order per problem
  bool has_code = false;  // `code` given: used as is, no extraction
  std::string text;       // the completion or the code
};

struct SamplesFile {
  std::vector<SampleRecord> samples;
  std::vector<v1::InputError> errors;
};

inline constexpr size_t kMaxSampleLineBytes = 16u << 20;

// Fails only when the file cannot be read at all.
StatusOr<SamplesFile> ReadSamplesJsonl(const std::string& path);

// Parses JSONL text (the same rules; used for uploads too).
SamplesFile ParseSamplesJsonl(const std::string& text);

}  // namespace evald
