#include "sandbox/step_wall.h"

namespace evald::sandbox {

std::chrono::milliseconds StepBackstop(const StepSpec& step) {
  return std::chrono::milliseconds(step.timeout_ms() != 0 ? step.timeout_ms() : 30000);
}

std::chrono::milliseconds StepWallCeiling(const StepSpec& step) {
  if (step.max_wall_ms() != 0) return std::chrono::milliseconds(step.max_wall_ms());
  return 4 * StepBackstop(step);
}

std::chrono::milliseconds JobWallCeiling(const JobRequest& job) {
  std::chrono::milliseconds total{0};
  for (const StepSpec& step : job.steps()) total += StepWallCeiling(step);
  return total;
}

}  // namespace evald::sandbox
