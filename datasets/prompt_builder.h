// Builds the prompt a model is given for a problem, byte-identical to verilog-eval's
// sv-generate: optional in-context examples, the question, optional rules, the
// [BEGIN]/[DONE] instruction unless explanations are allowed, and the system message. RTLLM's
// prompt is its description as it stands, with no system message.
#pragma once

#include <string>

#include "datasets/dataset.h"

namespace evald {

struct PromptOptions {
  int shots = 0;         // 0..4 in-context examples
  bool rules = false;    // the benchmark's "additional rules and coding conventions" (spec-to-rtl)
  bool explain = false;  // allow explanations: drop the [BEGIN]/[DONE] instruction (spec-to-rtl)
  // sv-generate's one model-specific variant (models_to_repeat_system_to_human_messages): the
  // system message and "\n" go in front of the user prompt, for models without a system role.
  bool system_in_prompt = false;
};

// `system` is always the task's system message, as the script has it; with system_in_prompt
// `user` starts with it too, and a backend sends `user` alone (SystemTurn()).
struct Prompt {
  std::string system;
  std::string user;
  bool system_in_user = false;

  // The system message to send as its own turn: none when it is already in the user prompt.
  const std::string& SystemTurn() const;
};

StatusOr<Prompt> BuildPrompt(const Dataset& dataset, const Problem& problem,
                             const PromptOptions& options);

}  // namespace evald
