// `evald drift`: what serving a checkpoint at int8/int4 costs, measured on the benchmark itself
// without sampling: each problem's prompt and a given completion (its reference, or the first
// sample of it in a file) run teacher-forced through a baseline GGUF file and one or more
// candidates; mean and p99 KL, top-1 agreement, delta-p RMS and the perplexity ratio over the
// completion tokens, overall (bootstrap intervals over problems), per design category and per
// problem.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace evald {

void RegisterDriftCommand(CLI::App& app, std::function<int()>* run);

}  // namespace evald
