// The run sink of a run kept in the store (`evald run` and the daemon): every generated sample
// is written with its generation record and the run's progress in one atomic batch, then
// graded; every graded sample is written with the run's progress (and the crash-loop guard's
// record leaves in the same batch). What is in the store is therefore always a consistent point
// to resume from. A sandbox fault leaves its sample ungraded there (a resumed run tries again).
#pragma once

#include <functional>
#include <mutex>
#include <string>

#include "base/thread_annotations.h"
#include "datasets/dataset.h"
#include "evald/proto/records.pb.h"
#include "evald/runs/run_counters.h"
#include "evald/runs/run_pipeline.h"
#include "evald/runs/run_progress.h"
#include "evald/store/store.h"

namespace evald {

// "RUN/PROBLEM/00000042": a stored sample's key.
std::string SampleKey(const std::string& run_id, const std::string& problem, int index);

class StoreSink : public RunSink {
 public:
  // `write` stores a batch, waiting out a full disk; false only when the process stops.
  using Writer = std::function<bool(Store::Batch&)>;

  // Sampling and grading progress after each sample is stored (optional).
  StoreSink(v1::Run* run, Store& store, GradingInFlight& guard, RunCounters& counters, Writer write,
            ProgressFn progress = nullptr)
      : run_(run),
        store_(store),
        guard_(guard),
        counters_(counters),
        write_(std::move(write)),
        progress_(std::move(progress)) {}

  // Records the session's facts on the run (tools, sandbox, calibrations, the settings as they
  // took effect) and stores it; Cancelled when the process is stopping.
  Status Opened(const GradingSession& session) override EXCLUDES(mu_);
  void Graded(v1::StoredSample* sample, GradeOutcome& outcome) override EXCLUDES(mu_);
  void Generated(v1::StoredSample* sample, const v1::GenerationRecord* record,
                 const std::string& record_key) override EXCLUDES(mu_);
  void Failed(const std::vector<v1::StoredSample*>& samples, bool cancelled) override EXCLUDES(mu_);

  // Adds the pipeline's counts to the run, under the progress lock.
  void AddFacts(const RunFacts& facts) EXCLUDES(mu_);

 private:
  v1::Run* run_ PT_GUARDED_BY(mu_);
  Store& store_;
  GradingInFlight& guard_;
  RunCounters& counters_;
  Writer write_;
  ProgressFn progress_;
  Mutex mu_;                        // one batch at a time: a sample + the run's progress
  int formal_ GUARDED_BY(mu_) = 0;  // graded samples with a formal outcome
};

}  // namespace evald
