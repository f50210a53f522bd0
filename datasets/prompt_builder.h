// Builds the prompt a model is given for a problem, byte-identical to verilog-eval's
// sv-generate: optional in-context examples, the question, optional rules, the
// [BEGIN]/[DONE] instruction unless explanations are allowed, and the system message. RTLLM's
// prompt is its description as it stands, with no system message, or one of the wrappings
// other harnesses put around it (PromptStyle).
#pragma once

#include <string>
#include <string_view>

#include "datasets/dataset.h"

namespace evald {

// How a benchmark that publishes no wrapping of its own (RTLLM) presents a problem's text.
enum class PromptStyle {
  kBenchmark,       // the benchmark's own: RTLLM's description as it stands
  kSystemMessage,   // the same after verilog-eval's spec-to-rtl system message, a turn of its own
  kQuestionAnswer,  // wrapped as verilog-eval v2 wraps a spec (Question:, [BEGIN]/[DONE], Answer:)
};

// "benchmark", "system", "question-answer".
std::string_view PromptStyleName(PromptStyle style);
StatusOr<PromptStyle> ParsePromptStyle(std::string_view name);
// What a command line's --prompt-style says about itself.
extern const char kPromptStyleHelp[];

struct PromptOptions {
  int shots = 0;         // 0..4 in-context examples
  bool rules = false;    // the benchmark's "additional rules and coding conventions" (spec-to-rtl)
  bool explain = false;  // allow explanations: drop the [BEGIN]/[DONE] instruction (spec-to-rtl)
  // sv-generate's one model-specific variant (models_to_repeat_system_to_human_messages): the
  // system message and "\n" go in front of the user prompt, for models without a system role.
  bool system_in_prompt = false;
  PromptStyle style = PromptStyle::kBenchmark;
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
