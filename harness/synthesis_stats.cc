#include "harness/synthesis_stats.h"

#include <array>
#include <utility>

#include "base/numbers.h"
#include "base/py_text.h"
#include "harness/formal_check.h"

namespace evald {

namespace {

constexpr char kStatFile[] = "synth_stat.txt";
constexpr char kPathFile[] = "synth_ltp.txt";

bool IsFlipFlop(std::string_view type) {
  for (std::string_view p : {"$_DFF", "$_SDFF", "$_ADFF", "$_ALDFF", "$_DFFSR", "$_DFFE", "$_SDFFE",
                             "$_SDFFCE", "$_ADFFE", "$_ALDFFE", "$_DFFSRE"})
    if (py::StartsWith(type, p)) return true;
  return false;
}

}  // namespace

double GateEquivalents(const std::string& type) {
  // NAND2 = 1; values of common 0.18-0.13 um libraries, rounded to thirds.
  static constexpr std::array<std::pair<std::string_view, double>, 12> kGates = {{
      {"$_NOT_", 0.67},
      {"$_BUF_", 1.0},
      {"$_NAND_", 1.0},
      {"$_NOR_", 1.0},
      {"$_AND_", 1.33},
      {"$_OR_", 1.33},
      {"$_ANDNOT_", 1.33},
      {"$_ORNOT_", 1.33},
      {"$_XOR_", 2.33},
      {"$_XNOR_", 2.33},
      {"$_MUX_", 2.33},
      {"$_NMUX_", 2.33},
  }};
  for (const auto& [name, ge] : kGates)
    if (type == name) return ge;
  if (py::StartsWith(type, "$_DFF_")) return 4.67;  // plain edge-triggered flip-flop
  if (IsFlipFlop(type)) return 5.67;                // with reset, set or enable
  if (py::StartsWith(type, "$_DLATCH")) return 3.0;
  return 0;
}

sandbox::JobRequest BuildSynthesisJob(const std::string& design, const std::string& top,
                                      const std::string& nonce, uint32_t cpu_seconds) {
  const std::string file = "synth_" + nonce + ".sv";
  sandbox::JobRequest job;
  (*job.mutable_files())[file] = ForYosys(design);
  (*job.mutable_files())["synth.ys"] =
      "read_verilog -sv " + file + "\nhierarchy -check -top " + top +
      "\nproc\nflatten\nsynth -flatten -top " + top +
      " -noabc\nabc -g AND,NAND,OR,NOR,XOR,XNOR,ANDNOT,ORNOT,MUX\nopt_clean\n"
      "tee -q -o " +
      kStatFile + " stat\ntee -q -o " + kPathFile + " ltp -noff\n";
  auto* step = job.add_steps();
  for (const char* a : {"yosys", "-q", "-s", "synth.ys"}) step->add_argv(a);
  SetYosysStepLimits(cpu_seconds, (2 * cpu_seconds + 20) * 1000, 4ull << 30, step);
  job.add_collect(kStatFile);
  job.add_collect(kPathFile);
  job.set_collect_max_bytes(1u << 20);
  return job;
}

void ParseStat(std::string_view text, SynthStats* stats) {
  stats->cells = -1;
  for (auto line : py::SplitFileLines(text)) {
    std::vector<std::string_view> w = py::SplitBlanks(line);
    if (w.size() == 4 && w[0] == "Number" && w[1] == "of" && w[2] == "cells:") {
      stats->cells = static_cast<int>(ParseInt(w[3], 0, 1 << 30).value_or(-1));
    } else if (w.size() == 2 && py::StartsWith(w[0], "$_")) {
      auto n = ParseInt(w[1], 0, 1 << 30);
      if (n) stats->by_type[std::string(w[0])] += static_cast<int>(*n);
    }
  }
  std::string unknown;
  for (const auto& [type, n] : stats->by_type) {
    double ge = GateEquivalents(type);
    if (ge == 0) unknown += (unknown.empty() ? "" : ", ") + type;
    stats->area += ge * n;
    if (IsFlipFlop(type)) stats->flip_flops += n;
  }
  if (!unknown.empty()) stats->problem = "cell types without an area weight: " + unknown;
}

int ParseLongestPath(std::string_view text) {
  constexpr std::string_view kMarker = "(length=";
  size_t at = text.find(kMarker);
  if (at == std::string_view::npos) return -1;
  size_t begin = at + kMarker.size(), end = text.find(')', begin);
  if (end == std::string_view::npos) return -1;
  return static_cast<int>(ParseInt(text.substr(begin, end - begin), 0, 1 << 30).value_or(-1));
}

// Why Yosys gave no statistics: how its step ended, with what it last said.
std::string FailedStep(const sandbox::StepResult& step) {
  using sandbox::StepResult;
  std::string how;
  if (step.outcome() == StepResult::TIMED_OUT) {
    how = "ran out of wall-clock time";
  } else if (YosysOutOfCpu(step)) {
    how = "ran out of CPU time";
  } else if (step.outcome() == StepResult::SIGNALED) {
    how = "was killed by signal " + std::to_string(step.signal());
  } else if (step.outcome() == StepResult::EXITED) {
    how = "exited with status " + std::to_string(step.exit_code());
  } else {
    how = "did not finish (" + StepResult::Outcome_Name(step.outcome()) + ")";
  }
  how += " after " + std::to_string(step.cpu_ms()) + " ms CPU, " +
         std::to_string(step.max_rss_kb() / 1024) + " MiB";
  return "yosys synthesis " + how + ": " + YosysError(step.output());
}

SynthStats ParseSynthesisResponse(const sandbox::JobResponse& response) {
  SynthStats s;
  auto stat = response.collected().find(kStatFile);
  auto path = response.collected().find(kPathFile);
  if (!response.error().empty() || stat == response.collected().end() ||
      path == response.collected().end()) {
    s.problem = !response.error().empty()   ? "sandbox: " + response.error()
                : response.steps_size() > 0 ? FailedStep(response.steps(0))
                                            : "yosys did not run";
    // Only what the design makes Yosys do is kept: a step the wall clock or the sandbox ended
    // says something about the machine's load.
    s.cacheable = response.error().empty() && response.steps_size() > 0 &&
                  response.steps(0).outcome() != sandbox::StepResult::TIMED_OUT;
    return s;
  }
  ParseStat(stat->second, &s);
  s.depth = ParseLongestPath(path->second);
  s.ok = s.cells >= 0 && s.depth >= 0;
  if (!s.ok && s.problem.empty()) s.problem = "yosys's statistics could not be read";
  return s;
}

}  // namespace evald
