// `evald serve` (the daemon) and `evald export` (leaderboards from a store).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace evald {

void RegisterServeCommand(CLI::App& app, std::function<int()>* run);
void RegisterExportCommand(CLI::App& app, std::function<int()>* run);
void RegisterOpenApiCommand(CLI::App& app, std::function<int()>* run);

}  // namespace evald
