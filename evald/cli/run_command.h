// `evald run`: the daemon's whole path in one process, without a daemon - a checkpoint (GGUF
// file, OpenAI-compatible endpoint or recorded completions) sampled over a dataset, graded,
// scored, stored (in --data, or a temporary store) and reported.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace evald {

void RegisterRunCommand(CLI::App& app, std::function<int()>* run);

}  // namespace evald
