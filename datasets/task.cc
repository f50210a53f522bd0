#include "datasets/task.h"

namespace evald {

std::string_view TaskName(Task task) {
  switch (task) {
    case Task::kSpecToRtl:
      return "spec-to-rtl";
    case Task::kCodeComplete:
      return "code-complete-iccad2023";
    case Task::kVerilogEvalV1Human:
      return "verilog-eval-v1-human";
    case Task::kVerilogEvalV1Machine:
      return "verilog-eval-v1-machine";
    case Task::kRtllm2:
      return "rtllm2";
  }
  return "spec-to-rtl";
}

namespace {
constexpr Task kTasks[] = {Task::kSpecToRtl, Task::kCodeComplete, Task::kVerilogEvalV1Human,
                           Task::kVerilogEvalV1Machine, Task::kRtllm2};
}  // namespace

StatusOr<Task> ParseTask(std::string_view name) {
  if (name == "code-complete") return Task::kCodeComplete;
  for (Task task : kTasks)
    if (name == TaskName(task)) return task;
  return Status::InvalidArgument("unknown task '" + std::string(name) + "' (expected " +
                                 TaskChoices() + ")");
}

std::string TaskChoices() {
  std::string choices;
  for (Task task : kTasks) choices += (choices.empty() ? "" : " | ") + std::string(TaskName(task));
  return choices;
}

std::string_view BenchmarkName(Task task) {
  if (task == Task::kRtllm2) return "rtllm";
  return IsVerilogEvalV1(task) ? "verilog-eval-v1" : "verilog-eval-v2";
}

std::string_view BenchmarkVersion(Task task) {
  if (task == Task::kRtllm2) return "2.0";
  return IsVerilogEvalV1(task) ? "1.0.0" : "2.0";
}

StatusOr<Task> FirstTaskOf(std::string_view benchmark) {
  for (Task task : kTasks)
    if (BenchmarkName(task) == benchmark) return task;
  return Status::InvalidArgument("unknown benchmark '" + std::string(benchmark) + "' (expected " +
                                 BenchmarkChoices() + ")");
}

std::string BenchmarkChoices() {
  std::string choices;
  std::string_view last;
  for (Task task : kTasks) {
    if (BenchmarkName(task) == last) continue;
    last = BenchmarkName(task);
    choices += (choices.empty() ? "" : " | ") + std::string(last);
  }
  return choices;
}

bool IsVerilogEvalV1(Task task) {
  return task == Task::kVerilogEvalV1Human || task == Task::kVerilogEvalV1Machine;
}

}  // namespace evald
