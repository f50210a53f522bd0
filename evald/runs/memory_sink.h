// The run sink of `evald eval`: results stay in the caller's samples (the pipeline writes each
// verdict into its sample), and a progress callback hears of each one.
#pragma once

#include <atomic>
#include <functional>

#include "evald/runs/run_pipeline.h"
#include "evald/runs/run_progress.h"

namespace evald {

class MemorySink : public RunSink {
 public:
  // Grading progress; called from grading threads.
  MemorySink(int total, ProgressFn progress) : total_(total), progress_(std::move(progress)) {}
  Status Opened(const GradingSession&) override { return Status::Ok(); }
  void Graded(v1::StoredSample* sample, GradeOutcome& outcome) override;

 private:
  const int total_;
  ProgressFn progress_;
  std::atomic<int> graded_{0}, formal_{0};
};

}  // namespace evald
