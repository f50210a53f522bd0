// Live counters of a process's runs (the daemon's /metrics), updated by the store sink.
#pragma once

#include <atomic>
#include <cstdint>

#include "evald/runs/sampling_stage.h"

namespace evald {

struct RunCounters {
  std::atomic<int64_t> runs_created{0}, runs_succeeded{0}, runs_failed{0}, runs_cancelled{0};
  std::atomic<int64_t> samples_graded{0}, simulations{0}, cache_hits{0}, sandbox_failures{0};
  std::atomic<int64_t> grading_micros{0};  // time spent in simulations, for samples/s
  SamplingCounters sampling;
};

}  // namespace evald
