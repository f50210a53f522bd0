// `evald plan`: samples per problem needed to detect a difference in pass@1, and the smallest
// difference an evaluation can detect - for "this problem set" and for "problems like these".
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace evald {

void RegisterPlanCommand(CLI::App& app, std::function<int()>* run);

}  // namespace evald
