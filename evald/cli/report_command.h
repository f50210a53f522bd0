// `evald report train-serve`: one checkpoint evaluated several ways, side by side (HTML,
// Markdown or JSON) - from report files, or from a store's runs selected by a label.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace evald {

void RegisterReportCommand(CLI::App& app, std::function<int()>* run);

}  // namespace evald
