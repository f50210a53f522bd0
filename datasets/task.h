// The two verilog-eval v2 tasks.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace evald {

enum class Task { kSpecToRtl, kCodeComplete };

std::string_view TaskName(Task task);  // "spec-to-rtl" / "code-complete-iccad2023"
StatusOr<Task> ParseTask(std::string_view name);

}  // namespace evald
