// `evald bench plan-memory`: what a checkpoint will hold in memory, from its metadata alone,
// against what this machine has free.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace evald {

void RegisterPlanMemoryCommand(CLI::App* bench, std::function<int()>* run);

}  // namespace evald
