// Extracts the Verilog from a raw model response by verilog-eval's own rules (sv-generate),
// producing the same bytes the benchmark writes to its sample file, and records how the code
// was found. Responses are untrusted text of any shape; extraction never fails, it may only
// find nothing (the simulator then reports the missing module as the benchmark would).
// RTLLM, which publishes no rule, takes what [BEGIN]/[DONE] enclose when a response has both
// (the question-answer prompt style asks for them), and of that the fenced blocks that declare a
// module, else all of it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "datasets/task.h"

namespace evald {

struct ExtractedCode {
  std::string code;
  // "markers", "markers_unterminated", "fence", "endmodule", "whole", "appended" (VerilogEval
  // v1: the interface, a line break, the completion; see eval.proto Extraction)
  std::string method;
  bool interface_prepended = false;
  std::vector<std::string> notes;
};

// `interface` is the problem's NAME_ifc.txt (used by code completion only).
ExtractedCode ExtractCode(Task task, std::string_view response, std::string_view interface);

}  // namespace evald
