// Reads a samples JSONL file: one JSON object a line with `problem` (or `task_id`) and
// `completion` (raw response) or `code` (extracted Verilog), optionally `index`. A bad line
// (malformed JSON, missing field, oversized) becomes an InputError naming the line; the rest of
// the file is still read.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
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
  std::vector<v1::InputError> errors;  // the first kMaxKeptInputErrors
  int64_t errors_dropped = 0;          // the rest, counted only
};

// A million bad lines must not become a million stored, logged and reported messages.
inline constexpr int kMaxKeptInputErrors = 100;
inline constexpr int kMaxSampleIndex = 1000000;

// Puts `errors` in line order (the reader's and the planner's come separately), keeps the
// first kMaxKeptInputErrors and, when any were dropped (here or `dropped_before`), ends the
// list with one entry (line 0) that says how many.
void CapInputErrors(google::protobuf::RepeatedPtrField<v1::InputError>* errors,
                    int64_t dropped_before);

inline constexpr size_t kMaxSampleLineBytes = 16u << 20;

// Fails only when the file cannot be read at all.
StatusOr<SamplesFile> ReadSamplesJsonl(const std::string& path);

// Parses JSONL text (the same rules; used for uploads too).
SamplesFile ParseSamplesJsonl(const std::string& text);

}  // namespace evald
