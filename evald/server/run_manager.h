// Runs submitted to the daemon: created with their samples in the store, executed one at a
// time by a background thread over a pool of sandboxes, every graded sample written together
// with the run's progress in one atomic batch. A daemon killed at any moment resumes its
// interrupted runs at start: graded samples are kept, the rest is graded, each exactly once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "datasets/dataset.h"
#include "evald/proto/records.pb.h"
#include "evald/runs/grading_in_flight.h"
#include "evald/runs/grading_session.h"
#include "evald/runs/run_sampling.h"
#include "evald/runs/sampling_stage.h"
#include "evald/server/run_execution.h"
#include "evald/store/store.h"
#include "sandbox/sandbox_options.h"

namespace evald {

struct RunManagerOptions {
  int jobs = 2;
  SandboxOptions sandbox;
  // Datasets runs may name: name -> path (a benchmark checkout or dataset_* folder).
  std::map<std::string, std::string> datasets;
  BackendOptions backend;    // its policy is set to `policy` below
  ExecutorOptions executor;  // where simulations run (docs/scale-out.md)
  // What checkpoints may point at and runs may fetch (operator_policy.h).
  OperatorPolicy policy;
};

// Who creates a run through the API: the submitting token's id (never the token) and its quotas.
struct Submitter {
  std::string id;
  Quotas quotas;
};

// The id runs record for a bearer token: the first 16 hex digits of its SHA-256.
std::string SubmitterId(const std::string& token);

struct RunFilter {
  std::string checkpoint_id;
  std::string dataset;
  std::string label_key, label_value;
  bool with_problems = false;  // keep per-problem results (leaderboard tiers need them)

  // "KEY" (any value) or "KEY=VALUE".
  void SetLabel(const std::string& label) {
    const size_t eq = label.find('=');
    label_key = label.substr(0, eq);
    label_value = eq == std::string::npos ? "" : label.substr(eq + 1);
  }
};

class RunManager {
 public:
  RunManager(Store* store, RunManagerOptions options);
  ~RunManager();

  // Re-queues runs a previous process left QUEUED or RUNNING, then starts the executor.
  Status Start();
  void Stop();

  Status PutCheckpoint(v1::Checkpoint* checkpoint);  // assigns id and time
  StatusOr<v1::Checkpoint> GetCheckpoint(const std::string& id) const;
  StatusOr<std::vector<v1::Checkpoint>> ListCheckpoints() const;

  // Creates a run: from uploaded samples (JSONL as `evald eval` takes it) with backend
  // "samples", or, for a checkpoint with a model, one that samples spec.sampling.n completions
  // of every problem (or of spec.problems) through the checkpoint's backend.
  // A submitter (the API's callers) is held to its quotas: runs in flight, samples queued and
  // bytes stored (ResourceExhausted, HTTP 429); without one (the CLI) nothing is counted.
  StatusOr<v1::Run> CreateRun(v1::RunSpec spec, const std::string& samples_jsonl,
                              const Submitter* submitter = nullptr);
  // Queues a FAILED or CANCELLED run again: what was generated and graded stays; missing
  // completions are asked for again and ungraded samples graded.
  Status Resume(const std::string& id);
  // A run's stored record as bytes (what GetRun parses), for callers that cache by content.
  StatusOr<std::string> GetRunBytes(const std::string& id) const;
  StatusOr<v1::Run> GetRun(const std::string& id) const;
  StatusOr<std::vector<v1::Run>> ListRuns(const RunFilter& filter) const;
  // Samples of a run in (problem, index) order, from `page_token` (exclusive), at most `limit`.
  // A page_token that this API did not hand out is an InvalidArgument (HTTP 400).
  StatusOr<std::vector<v1::StoredSample>> ListSamples(const std::string& run_id,
                                                      const std::string& page_token, int limit,
                                                      std::string* next_page_token) const;
  Status Cancel(const std::string& id, const std::string& reason);
  // The run's results as an evaluation report (for compare and leaderboards).
  StatusOr<v1::EvalReport> Report(const std::string& run_id) const;

  // A dataset runs may name (loaded once, kept).
  StatusOr<const Dataset*> FindDataset(const std::string& name, Task task);

  int QueueDepth() const;
  const RunCounters& counters() const { return counters_; }

 private:
  void ExecutorMain();
  // Runs one queued run through the pipeline's stages (evald/runs), persisting as it goes.
  void Execute(const std::string& run_id);
  Status ExecuteRun(v1::Run* run);  // Cancelled: the daemon is stopping
  struct RunBackend {
    v1::Checkpoint checkpoint;
    std::unique_ptr<SamplingBackend> backend;
  };
  Status MakeRunBackend(const v1::Run& run, RunBackend* out);
  StatusOr<std::unique_ptr<GradingSession>> OpenGrading(
      v1::Run* run, const GradingOptions& simulator_choice, const Dataset& dataset,
      const std::vector<v1::StoredSample>& pending);
  void RecordServing(const SamplingBackend& backend, std::vector<v1::RequestTiming> timings,
                     const SamplingResult& sampled, v1::Run* run) const;
  void Conclude(v1::Run* run, const SamplingResult& sampled);
  int CountCachedGenerations(const std::string& run_id) const;
  Status SaveRun(const v1::Run& run);
  // A run's writes wait out a full disk or a failing store (logged once) until they succeed,
  // so that every accepted run finishes once space returns; false only when stopping.
  bool WriteDurably(Store::Batch& batch, const std::string& run_id);
  bool SaveRunDurably(const v1::Run& run);
  void Finish(v1::Run* run, v1::RunState state, const std::string& reason);
  // Writes the new run with its samples in one batch and queues it.
  Status StoreAndQueue(const v1::Run& run, Store::Batch* batch);
  // ResourceExhausted when `run` (with the bytes it stores) would take `who` over a quota.
  Status CheckQuotas(const Submitter& who, const v1::Run& run, int64_t bytes) const;
  // Writes an uploaded recorded checkpoint's completions into the uploads directory.
  Status KeepUpload(v1::Checkpoint* checkpoint);
  Status AddUploadedSamples(const std::string& samples_jsonl, const Dataset& dataset, v1::Run* run,
                            Store::Batch* batch);
  Status AddSamplingSamples(const v1::RunSpec& spec, const Dataset& dataset, Task task,
                            v1::Run* run, Store::Batch* batch);

  Store* store_;
  RunManagerOptions options_;
  GradingInFlight in_flight_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::set<std::string> cancel_requested_;
  std::string running_;
  bool stopping_ = false;
  std::atomic<bool> abort_running_{false};   // the running run is cancelled or the daemon stops
  std::atomic<bool> cancel_running_{false};  // the running run is cancelled (not a stop)
  std::thread executor_;
  std::map<std::string, std::unique_ptr<Dataset>> datasets_;  // "name/task"
  std::mutex quota_mu_;  // a quota check and the run it admits are one step
  RunCounters counters_;
};

// Store keys.
// "PROBLEM/00000042": the form of the page tokens ListSamples hands out.
bool ValidPageToken(std::string_view token);

}  // namespace evald
