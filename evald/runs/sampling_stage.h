// The sampling stage of the one run pipeline: a run's samples that have no completion yet are
// asked of the checkpoint's backend - a problem's missing samples in runs of consecutive indices,
// as many per request as the backend takes, sample i drawn with seed + i however the requests
// fall - or taken from stored generations. Each completion is extracted and handed to a sink
// (the daemon stores it with the run's progress, then grades it).
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "datasets/dataset.h"
#include "datasets/prompt_builder.h"
#include "evald/backends/sampling_backend.h"
#include "evald/proto/records.pb.h"

namespace evald {

class Store;

// Live counters (the daemon's /metrics).
struct SamplingCounters {
  std::atomic<int64_t> requests{0}, failures{0}, retries{0};
  std::atomic<int64_t> samples_generated{0}, generated_tokens{0}, cache_hits{0};
};

class SamplingSink {
 public:
  virtual ~SamplingSink() = default;
  // `sample` has its completion and extracted code. `record` is the new generation record to
  // keep under `record_key` (nullptr when the completion came from a stored one).
  virtual void Generated(v1::StoredSample* sample, const v1::GenerationRecord* record,
                         const std::string& record_key) = 0;
  // A request failed after its retries; its samples carry the reason in generation_error.
  // `cancelled`: the run was stopped, not the backend's fault.
  virtual void Failed(const std::vector<v1::StoredSample*>& samples, bool cancelled) = 0;
};

struct SamplingResult {
  std::vector<v1::RequestTiming> timings;  // of every request answered
  int failed_requests = 0;                 // not counting cancelled ones
  std::string first_error;
  double seconds = 0;
};

PromptOptions PromptOptionsOf(const v1::RunSpec& spec);
v1::PromptStyle ProtoPromptStyle(PromptStyle style);

class SamplingStage {
 public:
  // `store` is the generation cache; `counters` optional.
  SamplingStage(const Dataset& dataset, const v1::RunSpec& spec, const v1::Checkpoint& checkpoint,
                SamplingBackend& backend, Store& store, SamplingCounters* counters);

  // Fails only when a prompt cannot be built; failed requests are reported through the sink.
  StatusOr<SamplingResult> Run(const std::vector<v1::StoredSample*>& to_generate,
                               SamplingSink& sink, const CancelToken& cancel);

 private:
  struct Batch {
    SampleRequest request;
    std::vector<v1::StoredSample*> samples;
  };
  Status BuildPrompt(const std::string& problem);
  std::string RecordKey(const v1::StoredSample& s);
  // Requests for what the generation cache does not answer (those go to the sink at once).
  StatusOr<std::vector<Batch>> Plan(const std::vector<v1::StoredSample*>& to_generate,
                                    SamplingSink& sink);
  void Accept(v1::StoredSample* s, const GeneratedSample& g, bool from_cache,
              const v1::RequestTiming* timing, SamplingSink& sink);
  void Answer(Batch& batch, SampleResponse& response, SamplingSink& sink, SamplingResult* result);

  const Dataset& dataset_;
  const v1::RunSpec& spec_;
  const v1::Checkpoint& checkpoint_;
  SamplingBackend& backend_;
  Store& store_;
  SamplingCounters* counters_;
  SamplingCounters own_counters_;
  std::map<std::string, Prompt> prompts_;
};

}  // namespace evald
