#include "datasets/prompt_builder.h"

#include "base/py_text.h"

namespace evald {

namespace {

constexpr std::pair<PromptStyle, std::string_view> kStyleNames[] = {
    {PromptStyle::kBenchmark, "benchmark"},
    {PromptStyle::kSystemMessage, "system"},
    {PromptStyle::kQuestionAnswer, "question-answer"},
};

// The options a problem's benchmark does not take are refused by name, never ignored: a run
// whose settings say "rules" must have had them.
Status CheckOptionsApply(Task task, const PromptOptions& options) {
  if (options.shots < 0 || options.shots > 4)
    return Status::InvalidArgument("shots must be between 0 and 4");
  if (task != Task::kRtllm2) {
    if (options.style != PromptStyle::kBenchmark)
      return Status::InvalidArgument(
          "prompt style '" + std::string(PromptStyleName(options.style)) +
          "' is for RTLLM: verilog-eval's prompts are wrapped as its own script wraps them");
    return Status::Ok();
  }
  if (options.shots > 0)
    return Status::InvalidArgument(
        "RTLLM takes no in-context examples: verilog-eval's examples are written for its "
        "TopModule interface");
  if (options.style == PromptStyle::kQuestionAnswer) return Status::Ok();
  if (options.rules || options.explain)
    return Status::InvalidArgument(
        "the rules and explanations belong to the question-answer prompt style "
        "(--prompt-style question-answer); RTLLM's description is sent as it stands");
  if (options.system_in_prompt && options.style == PromptStyle::kBenchmark)
    return Status::InvalidArgument(
        "RTLLM's own prompt is its description as it stands, with no system message to put in "
        "front of it (prompt styles system and question-answer have one)");
  return Status::Ok();
}

// verilog-eval v2's spec-to-rtl wrapping of a problem's text (sv-generate).
std::string QuestionAnswer(const datasets::BenchmarkPrompts& strings, std::string_view text,
                           const PromptOptions& options) {
  std::string full = "\nQuestion:\n";
  full += std::string(py::Strip(text)) + "\n";
  if (options.rules) full += strings.rules_suffix();
  if (!options.explain) full = std::string(py::RStrip(full)) + "\n" + strings.no_explain_suffix();
  full += "\nAnswer:\n";
  return full;
}

// Every line before the `module TopModule` header becomes a comment, and an empty line goes
// in front of the header (sv-generate's prefixed_prompt).
std::string CodeCompletePrompt(const datasets::BenchmarkPrompts& strings,
                               const std::string& prompt) {
  std::vector<std::string> lines;
  bool prefix = true;
  for (auto line : py::SplitLines(prompt)) {
    if (line.find("module TopModule") != std::string_view::npos) {
      lines.emplace_back();
      prefix = false;
    }
    lines.push_back(prefix ? "// " + std::string(line) : std::string(line));
  }
  return strings.code_complete().prompt_prefix() + py::JoinLines(lines);
}

// RTLLM's README: each design's description is the model's input as it stands (it opens
// "Please act as a professional verilog designer." and closes "Give me the complete code.").
// The other styles are what other harnesses send: a system message first, or verilog-eval's
// question-and-answer wrapping (whose [BEGIN]/[DONE] the RTLLM extraction honours).
void BuildRtllmPrompt(const datasets::BenchmarkPrompts& strings, const Problem& problem,
                      const PromptOptions& options, Prompt* out, std::string* full) {
  if (options.style == PromptStyle::kBenchmark) {
    *full += problem.prompt;
    return;
  }
  out->system = strings.spec_to_rtl().system_msg();
  *full += options.style == PromptStyle::kSystemMessage
               ? problem.prompt
               : QuestionAnswer(strings, problem.prompt, options);
}

}  // namespace

const char kPromptStyleHelp[] =
    "RTLLM: benchmark (its description as it stands, default) | system (after verilog-eval's "
    "system message) | question-answer (wrapped as verilog-eval wraps a spec)";

std::string_view PromptStyleName(PromptStyle style) {
  for (const auto& [s, name] : kStyleNames)
    if (s == style) return name;
  return "benchmark";
}

StatusOr<PromptStyle> ParsePromptStyle(std::string_view name) {
  for (const auto& [style, n] : kStyleNames)
    if (n == name) return style;
  return Status::InvalidArgument("unknown prompt style '" + std::string(name) +
                                 "' (benchmark, system, question-answer)");
}

const std::string& Prompt::SystemTurn() const {
  static const std::string kNone;
  return system_in_user ? kNone : system;
}

StatusOr<Prompt> BuildPrompt(const Dataset& dataset, const Problem& problem,
                             const PromptOptions& options) {
  if (Status st = CheckOptionsApply(dataset.task(), options); !st.ok()) return st;
  const auto& strings = dataset.prompts();
  Prompt out;
  std::string full;
  if (dataset.task() == Task::kRtllm2) {
    BuildRtllmPrompt(strings, problem, options, &out, &full);
  } else if (IsVerilogEvalV1(dataset.task())) {
    // Upstream's prompt: the description, then the header the completion continues.
    out.system = strings.code_complete().system_msg();
    full = problem.prompt;
  } else if (dataset.task() == Task::kCodeComplete) {
    out.system = strings.code_complete().system_msg();
    full = CodeCompletePrompt(strings, problem.prompt);
  } else {
    out.system = strings.spec_to_rtl().system_msg();
    full = QuestionAnswer(strings, problem.prompt, options);
  }
  if (options.shots > 0) {
    auto prefix = dataset.IclPrefix(options.shots);
    if (!prefix.ok()) return prefix.status();
    full = *prefix + full;
  }
  if (options.system_in_prompt) {
    full = out.system + "\n" + full;
    out.system_in_user = true;
  }
  out.user = std::move(full);
  return out;
}

}  // namespace evald
