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
  }
  return "spec-to-rtl";
}

StatusOr<Task> ParseTask(std::string_view name) {
  if (name == "spec-to-rtl") return Task::kSpecToRtl;
  if (name == "code-complete-iccad2023" || name == "code-complete") return Task::kCodeComplete;
  if (name == "verilog-eval-v1-human") return Task::kVerilogEvalV1Human;
  if (name == "verilog-eval-v1-machine") return Task::kVerilogEvalV1Machine;
  return Status::InvalidArgument("unknown task '" + std::string(name) +
                                 "' (expected spec-to-rtl, code-complete-iccad2023, "
                                 "verilog-eval-v1-human or verilog-eval-v1-machine)");
}

std::string_view BenchmarkName(Task task) {
  return IsVerilogEvalV1(task) ? "verilog-eval-v1" : "verilog-eval-v2";
}

bool IsVerilogEvalV1(Task task) {
  return task == Task::kVerilogEvalV1Human || task == Task::kVerilogEvalV1Machine;
}

}  // namespace evald
