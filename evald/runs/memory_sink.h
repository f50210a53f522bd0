// The run sink of `evald eval`: results stay in the caller's samples (the pipeline writes each
// verdict into its sample), and a progress callback hears of each one.
#pragma once

#include <atomic>
#include <functional>

#include "evald/runs/run_pipeline.h"

namespace evald {

class MemorySink : public RunSink {
 public:
  // progress(graded, total); called from grading threads.
  MemorySink(int total, std::function<void(int, int)> progress)
      : total_(total), progress_(std::move(progress)) {}
  Status Opened(const GradingSession&) override { return Status::Ok(); }
  void Graded(v1::StoredSample* sample, GradeOutcome& outcome) override;

 private:
  const int total_;
  std::function<void(int, int)> progress_;
  std::atomic<int> graded_{0};
};

}  // namespace evald
