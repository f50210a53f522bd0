// `evald generate`, `evald quantize` and `evald bench decode`: the integrated decoding core.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace evald {

void RegisterModelCommands(CLI::App& app, std::function<int()>* run);

}  // namespace evald
