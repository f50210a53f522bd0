// `evald compare` and `evald gate` on JSON reports.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace evald {

// Each registers its subcommand and sets `run` to what executes it when parsed.
void RegisterCompareCommand(CLI::App& app, std::function<int()>* run);
void RegisterGateCommand(CLI::App& app, std::function<int()>* run);

}  // namespace evald
