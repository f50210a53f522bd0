// VerilogEval v1 (Human 156 problems, Machine 143) as evald's problems. Upstream grades a
// completion by compiling `test + "\n" + prompt + "\n" + completion` with Icarus and reading the
// testbench's "Mismatches: N in M samples" (verilog_eval/execution.py). Its testbench is
// verilog-eval v2's with other names: the reference is `reference_module` inside the test text,
// the design under test `top_module`. Each problem is therefore given v2's shape, so that one
// grader (its hardening, its secret result line, formal, the audit) serves both: the reference
// module is taken out of the test and named RefModule, the testbench instantiates RefModule and
// TopModule, and the interface is the prompt's header naming TopModule. A sample is assembled
// as upstream does, the interface + "\n" + the completion (code_extractor.h).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "datasets/dataset.h"

namespace evald {

// One upstream problem in v2's shape; the description is the problem's detail_description.
StatusOr<Problem> ConvertVerilogEvalV1Problem(const std::string& task_id, const std::string& prompt,
                                              const std::string& test,
                                              const std::string& description);

// Every problem of the set `task` names, from a checkout root holding data/ and descriptions/;
// or every problem of a problem file (as upstream's --problem_file, data/example/ExampleEval.jsonl)
// with the set's descriptions from the checkout above it.
StatusOr<std::vector<Problem>> LoadVerilogEvalV1(const std::string& path, Task task);

// True when `path` is a VerilogEval v1 checkout (data/VerilogEval_Human.jsonl) or a .jsonl file.
bool IsVerilogEvalV1Checkout(const std::string& path);

}  // namespace evald
