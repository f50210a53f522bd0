#include "datasets/input_assumptions.h"

#include <google/protobuf/util/json_util.h>

#include "datasets/dataset.h"

namespace evald {

namespace generated {
// The JSON file's text, compiled in by CMake (input_assumptions_data.cc.in).
extern const char kVerilogEvalAssumptionsJson[];
}  // namespace generated

namespace {

std::string SquashBlanks(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const bool blank = c == ' ' || c == '\n' || c == '\r' || c == '\t';
    if (!blank) {
      out += c;
    } else if (!out.empty() && out.back() != ' ') {
      out += ' ';
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

StatusOr<datasets::InputAssumptions> ParseInputAssumptions(const std::string& json) {
  datasets::InputAssumptions out;
  auto st = google::protobuf::util::JsonStringToMessage(json, &out);
  if (!st.ok()) return Status::Corruption("input assumptions: " + std::string(st.message()));
  for (const auto& e : out.entries())
    if (e.problem().empty() || e.quote().empty() || e.assume().empty())
      return Status::Corruption("input assumptions: an entry lacks its problem, quote or assume");
  return out;
}

const datasets::InputAssumptions& VerilogEvalAssumptions() {
  static const datasets::InputAssumptions* entries = [] {
    auto parsed = ParseInputAssumptions(generated::kVerilogEvalAssumptionsJson);
    // The file is part of the build: tests/input_assumptions_test.cc keeps it readable.
    return new datasets::InputAssumptions(parsed.ok() ? *parsed : datasets::InputAssumptions{});
  }();
  return *entries;
}

bool PromptQuotes(const std::string& prompt, const std::string& quote) {
  const std::string q = SquashBlanks(quote);
  return !q.empty() && SquashBlanks(prompt).find(q) != std::string::npos;
}

void ApplyInputAssumptions(const datasets::InputAssumptions& entries,
                           std::vector<Problem>* problems) {
  for (Problem& p : *problems)
    for (const auto& e : entries.entries())
      if (e.problem() == p.name && PromptQuotes(p.prompt, e.quote()))
        p.assumptions.push_back(e.assume());
}

}  // namespace evald
