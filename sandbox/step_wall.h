// A step's wall-clock limits with their defaults (StepSpec.timeout_ms and max_wall_ms), read the
// same way by the init that keeps them and by the host that waits for the init's answer.
#pragma once

#include <chrono>

#include "sandbox/sandbox_protocol.pb.h"

namespace evald::sandbox {

// The backstop on the step's wall time less its waits for a CPU: timeout_ms, or 30 s.
std::chrono::milliseconds StepBackstop(const StepSpec& step);

// The ceiling on its plain wall time: max_wall_ms, or four times the backstop.
std::chrono::milliseconds StepWallCeiling(const StepSpec& step);

// The longest a job's steps can take one after another, however loaded the machine.
std::chrono::milliseconds JobWallCeiling(const JobRequest& job);

}  // namespace evald::sandbox
