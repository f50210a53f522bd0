// What is graded and how a sample is made: the two verilog-eval v2 tasks, and the two problem
// sets of VerilogEval v1 (code completion whose sample is the prompt's header followed by the
// completion, as its harness assembles it).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace evald {

enum class Task { kSpecToRtl, kCodeComplete, kVerilogEvalV1Human, kVerilogEvalV1Machine, kRtllm2 };

// "spec-to-rtl" / "code-complete-iccad2023" / "verilog-eval-v1-human" / "verilog-eval-v1-machine"
// / "rtllm2"
std::string_view TaskName(Task task);
StatusOr<Task> ParseTask(std::string_view name);
// Every task's name, as a command's help lists them: "spec-to-rtl | code-complete-iccad2023 | ..."
std::string TaskChoices();

// The benchmark a task belongs to, "verilog-eval-v2", "verilog-eval-v1" or "rtllm", and its
// version.
std::string_view BenchmarkName(Task task);
std::string_view BenchmarkVersion(Task task);

// The first task of a benchmark named as BenchmarkName writes it, "rtllm" -> rtllm2.
StatusOr<Task> FirstTaskOf(std::string_view benchmark);
// Every benchmark's name: "verilog-eval-v2 | verilog-eval-v1 | rtllm"
std::string BenchmarkChoices();

// VerilogEval v1: the design is the interface, a line break and the completion, verbatim.
bool IsVerilogEvalV1(Task task);

}  // namespace evald
