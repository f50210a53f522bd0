// RTLLM 2.0 (50 designs, github.com/hkust-zhiyao/RTLLM) as evald's problems. Each design's
// folder, `<Category>/<Subcategory>/<design>/`, holds design_description.txt (the prompt),
// testbench.v (self-checking: it instantiates the design alone and prints "Your Design
// Passed" or failure lines), verified_<name>.v (the reference) and sometimes data files its
// testbench reads by relative path. Upstream compiles `vcs -sverilog -timescale=1ns/1ns` and
// counts a design as correct when the simulation's output contains "pass" or "Pass" within
// 8 s; evald reads the testbench's own pass and failure lines instead, out of the design's
// reach (harness/self_checking_bench.h).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "datasets/dataset.h"

namespace evald {

// Every design of the checkout at `root`, in the order of their folders' paths. A design's
// problem name is its folder's name; the module under test is the one module its testbench
// instantiates of those the description, the reference and the folder name suggest (the
// harness checks that the testbench instantiates it exactly once).
StatusOr<std::vector<Problem>> LoadRtllm(const std::string& root);

// True when `path` looks like an RTLLM checkout (auto_run.py and File_list.md at its root).
bool IsRtllmCheckout(const std::string& path);

// The module a description names on its "Module name:" line ("" when it names none).
std::string DescribedModuleName(const std::string& description);

}  // namespace evald
