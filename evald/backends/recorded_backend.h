// Completions generated elsewhere, from a samples JSONL file (as `evald eval --samples` reads
// it): request (problem, indices) is answered with the recorded completions of those indices.
// A missing one is that request's error, never an invented sample.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "evald/backends/sampling_backend.h"

namespace evald {

class RecordedBackend : public SamplingBackend {
 public:
  // Reads the file; lines that cannot be used are reported through `errors` (line: reason).
  static StatusOr<std::unique_ptr<RecordedBackend>> Open(const std::string& path,
                                                         std::vector<std::string>* errors);
  std::string Kind() const override { return "recorded"; }
  std::string Describe() const override { return path_; }
  int MaxSamplesPerRequest() const override { return 1; }  // each sample found or missing alone
  void Run(const std::vector<SampleRequest>& requests,
           const std::function<void(size_t, SampleResponse)>& done,
           const CancelToken& cancel) override;

 private:
  std::string path_;
  std::map<std::pair<std::string, int>, std::string> completions_;  // (problem, index) -> text
};

}  // namespace evald
