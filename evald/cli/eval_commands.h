// `evald eval` (grade a samples file through the one run pipeline, in memory) and
// `evald dataset check|prompts` (every reference against its testbench; the benchmark's prompts).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace evald {

void RegisterEvalCommand(CLI::App& app, std::function<int()>* run);
void RegisterDatasetCommands(CLI::App& app, std::function<int()>* run);

}  // namespace evald
