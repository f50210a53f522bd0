#include "datasets/task.h"

namespace evald {

std::string_view TaskName(Task task) {
  return task == Task::kSpecToRtl ? "spec-to-rtl" : "code-complete-iccad2023";
}

StatusOr<Task> ParseTask(std::string_view name) {
  if (name == "spec-to-rtl") return Task::kSpecToRtl;
  if (name == "code-complete-iccad2023" || name == "code-complete") return Task::kCodeComplete;
  return Status::InvalidArgument("unknown task '" + std::string(name) +
                                 "' (expected spec-to-rtl or code-complete-iccad2023)");
}

}  // namespace evald
