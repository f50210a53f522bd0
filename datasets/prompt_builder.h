// Builds the prompt a model is given for a problem, byte-identical to verilog-eval's
// sv-generate: optional in-context examples, the question, optional rules, the
// [BEGIN]/[DONE] instruction unless explanations are allowed, and the system message.
#pragma once

#include <string>

#include "datasets/dataset.h"

namespace evald {

struct PromptOptions {
  int shots = 0;         // 0..4 in-context examples
  bool rules = false;    // the benchmark's "additional rules and coding conventions" (spec-to-rtl)
  bool explain = false;  // allow explanations: drop the [BEGIN]/[DONE] instruction (spec-to-rtl)
};

struct Prompt {
  std::string system;
  std::string user;
};

StatusOr<Prompt> BuildPrompt(const Dataset& dataset, const Problem& problem,
                             const PromptOptions& options);

}  // namespace evald
