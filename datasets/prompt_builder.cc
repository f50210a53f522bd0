#include "datasets/prompt_builder.h"

#include "base/py_text.h"

namespace evald {

const std::string& Prompt::SystemTurn() const {
  static const std::string kNone;
  return system_in_user ? kNone : system;
}

StatusOr<Prompt> BuildPrompt(const Dataset& dataset, const Problem& problem,
                             const PromptOptions& options) {
  if (options.shots < 0 || options.shots > 4)
    return Status::InvalidArgument("shots must be between 0 and 4");
  if (dataset.task() == Task::kRtllm2 &&
      (options.shots > 0 || options.rules || options.system_in_prompt))
    return Status::InvalidArgument(
        "RTLLM's prompt is its description as it stands: in-context examples, the rules and "
        "the system message in the prompt do not apply to it");
  const auto& strings = dataset.prompts();
  Prompt out;
  std::string full;
  if (options.system_in_prompt) {
    full = (dataset.task() == Task::kSpecToRtl ? strings.spec_to_rtl().system_msg()
                                               : strings.code_complete().system_msg()) +
           "\n";
    out.system_in_user = true;
  }
  if (options.shots > 0) {
    auto prefix = dataset.IclPrefix(options.shots);
    if (!prefix.ok()) return prefix.status();
    full += *prefix;
  }
  if (dataset.task() == Task::kRtllm2) {
    // RTLLM's README: each design's description is the model's input as it stands (it opens
    // "Please act as a professional verilog designer." and closes "Give me the complete
    // code."); no system message.
    full += problem.prompt;
  } else if (IsVerilogEvalV1(dataset.task())) {
    // Upstream's prompt: the description, then the header the completion continues.
    out.system = strings.code_complete().system_msg();
    full += problem.prompt;
  } else if (dataset.task() == Task::kCodeComplete) {
    out.system = strings.code_complete().system_msg();
    // Every line before the `module TopModule` header becomes a comment, and an empty line
    // goes in front of the header (sv-generate's prefixed_prompt).
    std::vector<std::string> lines;
    bool prefix = true;
    for (auto line : py::SplitLines(problem.prompt)) {
      if (line.find("module TopModule") != std::string_view::npos) {
        lines.emplace_back();
        prefix = false;
      }
      lines.push_back(prefix ? "// " + std::string(line) : std::string(line));
    }
    full += strings.code_complete().prompt_prefix() + py::JoinLines(lines);
  } else {
    out.system = strings.spec_to_rtl().system_msg();
    full += "\nQuestion:\n";
    full += std::string(py::Strip(problem.prompt)) + "\n";
    if (options.rules) full += strings.rules_suffix();
    if (!options.explain) full = std::string(py::RStrip(full)) + "\n" + strings.no_explain_suffix();
    full += "\nAnswer:\n";
  }
  out.user = std::move(full);
  return out;
}

}  // namespace evald
