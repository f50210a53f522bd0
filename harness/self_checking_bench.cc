#include "harness/self_checking_bench.h"

#include <set>

#include "base/py_text.h"
#include "base/verilog_identifier.h"
#include "harness/design_isolation.h"
#include "harness/instance_connections.h"
#include "harness/judge_renaming.h"
#include "harness/verilog_lexer.h"

namespace evald {

namespace {

constexpr std::string_view kPassLabel = "PASS ";
constexpr std::string_view kFailLabel = "FAIL ";

bool Holds(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// Which of the testbench's displays state its verdict.
std::optional<std::string> VerdictLabel(std::string_view text) {
  if (Holds(text, "Passed")) return std::string(kPassLabel);
  if (Holds(text, "fail") || Holds(text, "Fail") || Holds(text, "Error") || Holds(text, "error"))
    return std::string(kFailLabel);
  return std::nullopt;
}

// A pass line's words, without the rule of '=' and blanks around them.
std::string PassText(std::string_view display) {
  const size_t begin = display.find_first_not_of("= ");
  const size_t end = display.find_last_not_of("= ");
  return begin == std::string_view::npos ? std::string()
                                         : std::string(display.substr(begin, end - begin + 1));
}

// The one module the testbench declares.
StatusOr<std::string> TestbenchModule(const std::string& testbench) {
  const auto t = TokenizeVerilog(testbench);
  std::vector<std::string_view> modules;
  for (size_t i = 0; i + 1 < t.size(); ++i)
    if (t[i].kind == VerilogToken::Kind::kIdentifier && t[i].text == "module")
      modules.push_back(t[i + 1].text);
  if (modules.size() != 1)
    return Status::Corruption("the testbench declares " + std::to_string(modules.size()) +
                              " modules (expected one)");
  return std::string(modules.front());
}

// The header parameters the testbench sets on its instance of `module` (`M #(.P(v)) inst` or
// positionally `M #(v) inst`, read against the reference's header order).
std::vector<std::string> ParameterOverrides(const std::string& testbench, const std::string& module,
                                            const ModuleInterface& reference) {
  const auto t = TokenizeVerilog(testbench);
  std::vector<std::string> names;
  for (size_t i = 0; i + 2 < t.size(); ++i) {
    if (t[i].kind != VerilogToken::Kind::kIdentifier || t[i].text != module ||
        t[i + 1].text != "#" || t[i + 2].text != "(")
      continue;
    int depth = 0;
    size_t position = 0;
    bool item_start = true;
    for (size_t j = i + 2; j < t.size(); ++j) {
      const std::string_view x = t[j].text;
      if (x == "(" || x == "[" || x == "{") ++depth;
      if (x == ")" || x == "]" || x == "}") --depth;
      if (depth == 0) break;
      if (depth == 1 && x == ",") {
        ++position;
        item_start = true;
        continue;
      }
      if (depth == 1 && item_start && x != "(") {
        if (x == "." && j + 1 < t.size()) {
          names.emplace_back(t[j + 1].text);
        } else if (position < reference.parameters.size()) {
          names.push_back(reference.parameters[position].name);
        }
        item_start = false;
      }
    }
  }
  return names;
}

// The testbench with its pass and failure displays tagged; what each pass line says is added
// to `pass_texts`.
std::string TagVerdictLines(const std::string& testbench, const std::string& nonce,
                            std::vector<std::string>* pass_texts) {
  return TagDisplays(testbench, nonce, [&](std::string_view text) {
    auto label = VerdictLabel(text);
    if (label && *label == kPassLabel) pass_texts->push_back(PassText(text));
    return label;
  });
}

}  // namespace

StatusOr<HardenedBench> HardenSelfCheckingBench(const Problem& problem, const std::string& nonce) {
  const GradingSetup& setup = problem.setup;
  InterfaceReading reading = ReadModuleInterface(problem.reference, setup.reference_module);
  if (reading.outcome != InterfaceReading::Outcome::kFound)
    return Status::Corruption("the reference's interface (" + setup.reference_module +
                              "): " + (reading.problem.empty() ? "not found" : reading.problem));
  auto top = TestbenchModule(problem.testbench);
  if (!top.ok()) return top.status();
  HardenedBench h;
  h.pass_lines = true;
  h.interface = std::move(reading.interface);
  h.top = *top + "_" + nonce;
  h.data_files = setup.data_files;
  h.default_timescale = setup.default_timescale;
  // The parameters it sets keep their names: the wrapper declares and hands them on.
  const auto overrides = ParameterOverrides(problem.testbench, setup.design_module, h.interface);
  std::set<std::string, std::less<>> keep = {setup.design_module};
  for (const auto& p : h.interface.ports) keep.insert(p.name);
  keep.insert(overrides.begin(), overrides.end());
  const std::string wrapper = "evald_dut_" + nonce;
  std::string tb = RenameIdentifier(RenameJudgeNames(problem.testbench, keep, nonce),
                                    setup.design_module, wrapper);
  auto instance = FindSingleInstance(tb, wrapper, h.interface);
  if (!instance.ok())
    return Status::Corruption("the testbench's instance of " + setup.design_module + ": " +
                              instance.status().message());
  tb = TagVerdictLines(tb, nonce, &h.pass_texts);
  if (h.pass_texts.empty())
    return Status::Corruption("the testbench prints no line saying the design passed");
  auto with_tag = InsertAfterHeader(tb, h.top, ResultTagDeclaration(nonce));
  if (!with_tag.ok()) return with_tag.status();
  h.testbench = "`resetall\n`default_nettype none\n" + *with_tag;
  auto isolation = IsolationWrapper(
      h.interface, {wrapper, setup.design_module, "design_" + nonce, nonce, "", overrides});
  if (!isolation.ok()) return isolation.status().Annotate("the design cannot be isolated");
  h.reference = "`resetall\n`default_nettype none\n" + *isolation;
  return h;
}

PassLines ScanPassLines(std::string_view out, std::string_view err, const std::string& tag,
                        const std::vector<std::string>& pass_texts) {
  PassLines r;
  const std::string prefix = tag + " ";
  auto forged = [&](std::string_view line) {
    if (Holds(line, tag)) return true;
    for (const auto& text : pass_texts)
      if (!text.empty() && Holds(line, text)) return true;
    return false;
  };
  for (auto line : py::SplitFileLines(err)) {
    if (!py::StartsWith(line, prefix)) {
      r.forged += forged(line);
      continue;
    }
    const std::string_view body = line.substr(prefix.size());
    if (py::StartsWith(body, kPassLabel)) {
      ++r.pass;
    } else if (py::StartsWith(body, kFailLabel)) {
      if (r.fail++ == 0) r.first_fail = std::string(body.substr(kFailLabel.size(), 300));
    }
  }
  for (auto line : py::SplitFileLines(out)) r.forged += forged(line);
  return r;
}

char RtllmUpstreamLetter(bool compiled, std::string_view simulation_output) {
  if (!compiled) return 'S';
  return Holds(simulation_output, "pass") || Holds(simulation_output, "Pass") ? '.' : 'R';
}

}  // namespace evald
