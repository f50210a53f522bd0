// The write side of a store's runs: a checkpoint registered and a run created are checked and
// normalised here - the operator's policy for what a checkpoint may point at
// (evald/runs/operator_policy.h), the run's settings (evald/runs/grading_settings.h, with the
// daemon's defaults), its samples planned and extracted, a submitter's quotas - and stored in
// one batch. The queue (run_queue.h) or `evald run` then executes the run.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "base/thread_annotations.h"
#include "evald/proto/records.pb.h"
#include "evald/runs/dataset_registry.h"
#include "evald/runs/operator_policy.h"
#include "evald/runs/run_counters.h"
#include "evald/store/store.h"

namespace evald {

struct RequestOptions {
  OperatorPolicy policy;
  // What a run that leaves a setting at its zero value grades with (evald serve's flags).
  v1::GradingSettings grading_defaults;
};

// Who creates a run through the API: the submitting token's id (never the token) and its quotas.
struct Submitter {
  std::string id;
  Quotas quotas;
};

// The id runs record for a bearer token: the first 16 hex digits of its SHA-256.
std::string SubmitterId(const std::string& token);

class RunRequests {
 public:
  RunRequests(Store* store, DatasetRegistry* datasets, RequestOptions options,
              RunCounters* counters = nullptr)
      : store_(store), datasets_(datasets), options_(std::move(options)), counters_(counters) {}

  const OperatorPolicy& policy() const { return options_.policy; }
  // Runs created are counted there (the daemon's /metrics); optional.
  void CountInto(RunCounters* counters) { counters_ = counters; }

  Status PutCheckpoint(v1::Checkpoint* checkpoint);  // assigns id and time
  // Removes a checkpoint (and the completions uploaded with it) that no stored run refers to;
  // InvalidArgument naming the runs otherwise.
  Status DeleteCheckpoint(const std::string& id);
  // Creates a run: from uploaded samples (JSONL as `evald eval` takes it) with backend
  // "samples", or, for a checkpoint with a model, one that samples spec.sampling.n completions
  // of every problem (or of spec.problems) through the checkpoint's backend. A submitter (the
  // API's callers) is held to its quotas (ResourceExhausted, HTTP 429); without one (the CLI)
  // nothing is counted. The run is stored QUEUED; the caller queues it.
  StatusOr<v1::Run> CreateRun(v1::RunSpec spec, const std::string& samples_jsonl,
                              const Submitter* submitter = nullptr) EXCLUDES(quota_mu_);

 private:
  Status NormalizeRunSpec(const std::optional<v1::Checkpoint>& checkpoint, bool has_upload,
                          v1::RunSpec* spec) const;
  // The settings moved from their legacy spellings, the daemon's defaults filled, checked.
  Status NormalizeGrading(v1::RunSpec* spec) const;
  // spec.drift's base is a registered gguf checkpoint and the run one the core samples.
  Status CheckDrift(const std::optional<v1::Checkpoint>& checkpoint, v1::RunSpec* spec) const;
  Status KeepUpload(v1::Checkpoint* checkpoint);
  Status AddUploadedSamples(const std::string& samples_jsonl, const Dataset& dataset, v1::Run* run,
                            Store::Batch* batch);
  Status AddSamplingSamples(const v1::RunSpec& spec, const Dataset& dataset, v1::Run* run,
                            Store::Batch* batch);
  // ResourceExhausted when `run` (with the bytes it stores) would take `who` over a quota.
  Status CheckQuotas(const Submitter& who, const v1::Run& run) const REQUIRES(quota_mu_);

  Store* store_;
  DatasetRegistry* datasets_;
  RequestOptions options_;
  RunCounters* counters_;
  Mutex quota_mu_;  // a quota check and the run it admits are one step
};

}  // namespace evald
