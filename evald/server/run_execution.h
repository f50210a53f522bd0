// One daemon run going through the pipeline's stages, persisted as it goes: every generated
// sample is written with its generation record and the run's progress in one atomic batch, then
// graded; every graded sample is written with the run's progress (and the crash-loop guard's
// record leaves in the same batch). What is in the store is therefore always a consistent point
// to resume from.
#pragma once

#include <functional>
#include <mutex>
#include <string>

#include "datasets/dataset.h"
#include "evald/proto/records.pb.h"
#include "evald/runs/grading_session.h"
#include "evald/runs/sampling_stage.h"
#include "evald/store/store.h"

namespace evald {

// Counters for /metrics.
struct RunCounters {
  std::atomic<int64_t> runs_created{0}, runs_succeeded{0}, runs_failed{0}, runs_cancelled{0};
  std::atomic<int64_t> samples_graded{0}, simulations{0}, cache_hits{0}, sandbox_failures{0};
  std::atomic<int64_t> grading_micros{0};  // time spent in simulations, for samples/s
  SamplingCounters sampling;
};

std::string SampleKey(const std::string& run_id, const std::string& problem, int index);

class RunExecution : public SamplingSink {
 public:
  // `write` stores a batch, waiting out a full disk; false only when the daemon stops.
  using Writer = std::function<bool(Store::Batch&)>;

  RunExecution(v1::Run* run, const Dataset& dataset, Store& store, GradingSession& grading,
               GradingInFlight& guard, RunCounters& counters, Writer write);

  // Grades a generated sample; its verdict is stored when it comes. A sandbox fault leaves it
  // ungraded (a resumed run tries it again).
  void Grade(v1::StoredSample* sample);

  void Generated(v1::StoredSample* sample, const v1::GenerationRecord* record,
                 const std::string& record_key) override;
  void Failed(const std::vector<v1::StoredSample*>& samples, bool cancelled) override;

  // Adds to the run's sampling time, under the progress lock.
  void AddSamplingSeconds(double seconds);

 private:
  void Graded(v1::StoredSample* sample, GradeOutcome& outcome);

  v1::Run* run_;
  const Dataset& dataset_;
  Store& store_;
  GradingSession& grading_;
  GradingInFlight& guard_;
  RunCounters& counters_;
  Writer write_;
  std::mutex mu_;  // one batch at a time: a sample + the run's progress
};

}  // namespace evald
