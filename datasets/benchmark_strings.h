// The exact strings verilog-eval's generation step uses (NVlabs/verilog-eval c498220, MIT).
// They are built in so that prompts can be made without a benchmark checkout; when a checkout
// has prompts.json, that file is read instead (and the tests check both agree).
#pragma once

#include <string>

#include "base/status.h"
#include "datasets/benchmark_prompts.pb.h"

namespace evald {

const datasets::BenchmarkPrompts& BuiltinBenchmarkPrompts();

// Parses a prompts.json file's text.
StatusOr<datasets::BenchmarkPrompts> ParseBenchmarkPrompts(const std::string& json);

}  // namespace evald
