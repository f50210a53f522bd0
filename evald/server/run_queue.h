// The daemon's queue of runs: one background thread takes the runs in the order they were
// queued and drives each through the one pipeline into the store (evald/runs/stored_run.h).
// Each run gets its own cancellation token: Cancel() cancels the one running (and its work on a
// cluster), Stop() stops it where it stands. A daemon killed at any moment resumes its
// interrupted runs at the next Start(): graded samples are kept, the rest is graded, each once.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "base/cancel_token.h"
#include "base/status.h"
#include "base/thread_annotations.h"
#include "evald/proto/records.pb.h"
#include "evald/runs/dataset_registry.h"
#include "evald/runs/grading_in_flight.h"
#include "evald/runs/grading_resources.h"
#include "evald/runs/run_counters.h"
#include "evald/runs/run_sampling.h"
#include "evald/runs/stored_run.h"
#include "evald/store/store.h"

namespace evald {

struct QueueOptions {
  // Sandboxes, jobs and the cluster executor; the store, guard and cancel token are the queue's.
  GradingResources resources;
  BackendOptions backend;  // how backends are built (and what they may reach)
};

class RunQueue {
 public:
  RunQueue(Store* store, DatasetRegistry* datasets, QueueOptions options);
  ~RunQueue();

  // Queues the runs a previous process left QUEUED or RUNNING, then starts the thread.
  Status Start() EXCLUDES(mu_);
  void Stop() EXCLUDES(mu_);

  // A run just created (RunRequests::CreateRun).
  void Enqueue(const std::string& run_id) EXCLUDES(mu_);
  // Queues a FAILED or CANCELLED run again: what was generated and graded stays; missing
  // completions are asked for again and ungraded samples graded.
  Status Resume(const std::string& run_id) EXCLUDES(mu_);
  // A queued run ends CANCELLED at once; a running one when its pipeline has stopped.
  Status Cancel(const std::string& run_id, const std::string& reason) EXCLUDES(mu_);

  // Removes an ended run and its samples (how many); a queued or running one is refused
  // (cancel it first), and one cannot resume while this runs.
  StatusOr<int64_t> Delete(const std::string& run_id) EXCLUDES(mu_);

  int QueueDepth() const EXCLUDES(mu_);  // queued + running
  RunCounters& counters() { return counters_; }

 private:
  void Main() EXCLUDES(mu_);
  void Execute(const std::string& run_id, const CancelToken& cancel);
  StoredRunContext ContextFor(const std::string& run_id, const CancelToken& cancel);
  // Waits out a full disk or a failing store (logged once) until the write succeeds, so that
  // every accepted run finishes once space returns; false only when stopping.
  bool WriteDurably(Store::Batch& batch, const std::string& run_id) EXCLUDES(mu_);
  void Finish(v1::Run* run, const RunEnd& end, const StoredRunContext& context) EXCLUDES(mu_);

  Store* store_;
  DatasetRegistry* datasets_;
  QueueOptions options_;
  GradingInFlight guard_;
  RunCounters counters_;

  mutable Mutex mu_;
  std::condition_variable changed_;
  std::deque<std::string> queue_ GUARDED_BY(mu_);
  std::string running_ GUARDED_BY(mu_);
  std::shared_ptr<CancelToken> running_cancel_ GUARDED_BY(mu_);
  // Runs asked to cancel, with the reason given (recorded when the run ends).
  std::map<std::string, std::string> cancel_requested_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace evald
