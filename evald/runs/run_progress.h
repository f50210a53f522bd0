// Where a run stands, for progress displays (a bar on a terminal, lines in a log): the phase the
// pipeline is in and its count. Calibration simulates every problem's reference first, sampling
// draws the completions (runs with a backend), grading gives each sample its verdict; formal
// cross-checks run inside grading, so they are a count beside it, not a phase of their own.
#pragma once

#include <functional>

namespace evald {

enum class RunPhase { kCalibrating, kSampling, kGrading };

struct RunProgress {
  RunPhase phase = RunPhase::kGrading;
  int done = 0;
  int total = 0;
  int formal_checked = 0;  // grading: samples whose verdict carries a formal check's outcome
};

// Called from the pipeline's threads (the callee synchronises).
using ProgressFn = std::function<void(const RunProgress&)>;

inline const char* PhaseName(RunPhase phase) {
  switch (phase) {
    case RunPhase::kCalibrating:
      return "calibrating";
    case RunPhase::kSampling:
      return "sampling";
    case RunPhase::kGrading:
      return "grading";
  }
  return "";
}

}  // namespace evald
