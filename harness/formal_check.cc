#include "harness/formal_check.h"

#include <signal.h>

#include <algorithm>

#include "base/numbers.h"
#include "base/py_text.h"
#include "base/verilog_identifier.h"
#include "harness/simulator.h"
#include "harness/testbench_hardening.h"
#include "harness/verilog_lexer.h"

namespace evald {

namespace {

constexpr char kCycleScript[] = "cycle.ys";
constexpr char kClockScript[] = "clk2ff.ys";
constexpr char kCycleResult[] = "sat_cycle.txt";
constexpr char kClockResult[] = "sat_clk2ff.txt";
constexpr uint64_t kMaxResultBytes = 4u << 20;

// Reads both designs and elaborates them to word-level cells, memories mapped to flip-flops.
// The reference is read with -formal where it carries the problem's input assumptions.
std::string ReadBoth(const FormalNames& n, bool assumes) {
  return std::string("read_verilog -sv ") + (assumes ? "-formal " : "") + n.reference_file +
         "\nread_verilog -sv " + n.design_file +
         "\nhierarchy -check\nproc\nflatten\nmemory\nopt_clean\n";
}

// The reference with `always @* assume (...)` for each of the problem's input assumptions
// inside the module `name` (before its `endmodule`): the miter takes the assumption cells in
// with the reference, over the inputs both designs share, and `sat -set-assumes` keeps every
// step to the inputs the problem allows. The reference is the benchmark's text, never the
// design's, so nothing a design writes can add or remove an assumption.
std::string WithAssumptions(const std::string& reference, const std::string& name,
                            const std::vector<std::string>& assumptions) {
  if (assumptions.empty()) return reference;
  const std::vector<VerilogToken> t = TokenizeVerilog(reference);
  size_t end = std::string::npos;
  for (size_t i = 0; i + 1 < t.size() && end == std::string::npos; ++i) {
    if (t[i].kind != VerilogToken::Kind::kIdentifier || t[i].text != "module" ||
        t[i + 1].text != name)
      continue;
    for (size_t k = i + 2; k < t.size(); ++k)
      if (t[k].kind == VerilogToken::Kind::kIdentifier && t[k].text == "endmodule") {
        end = static_cast<size_t>(t[k].text.data() - reference.data());
        break;
      }
  }
  if (end == std::string::npos) return reference;  // no such module: Yosys will say so
  std::string block;
  for (const std::string& a : assumptions) block += "  always @* assume (" + a + ");\n";
  return reference.substr(0, end) + block + reference.substr(end);
}

// Fails (and so ends the script before its SAT command) unless one SAT step per clock cycle is
// exact: no flip-flop but rising-edge ones clocked by `clk`, nothing asynchronous or
// level-sensitive, and `clk` used as a clock only.
constexpr char kCycleModelAssertions[] =
    "select -assert-none r:CLK_POLARITY=1'0\n"
    "select -assert-none t:$adff* t:$aldff* t:$dffsr* t:$dlatch* t:$sr t:$ff t:$_*\n"
    "select -assert-none t:$dff,$dffe,$sdff,$sdffe,$sdffce w:clk %co1:+[CLK] %d\n"
    "select -assert-none w:clk %co1:-[CLK] w:clk %d\n";

// Gate level before the miter: Yosys's x model is far cheaper on gates than on word-level
// arithmetic (measured: 5x fewer SAT variables per step on a counter).
std::string SatScript(const FormalNames& n, bool clock_phases, int max_steps, bool has_clk,
                      bool assumes, const FormalOptions& options, const char* result_file) {
  std::string s = ReadBoth(n, assumes);
  s += clock_phases ? "wreduce\nopt\nclk2fflogic\n"
                    : std::string(kCycleModelAssertions) + "wreduce\nopt\n";
  s += "techmap\nopt -fast\n";
  s += "miter -equiv -flatten -make_outputs -ignore_gold_x " + n.reference_module + " TopModule " +
       n.miter + "\nhierarchy -top " + n.miter + "\nopt -fast\n";
  s += std::string("tee -q -o ") + result_file + " sat -tempinduct -maxsteps " +
       std::to_string(max_steps) +
       " -set-init-undef -enable_undef -set-def-inputs -prove trigger 0 -show-inputs "
       "-show-outputs -timeout " +
       std::to_string(options.cpu_seconds) + (assumes ? " -set-assumes" : "");
  if (clock_phases && has_clk) {
    // The testbench's clock: high at the first step (no edge: clk2fflogic's sampled clock
    // starts high), then toggling every step.
    for (int t = 1; t <= max_steps; ++t)
      s += " -set-at " + std::to_string(t) + " in_clk " + (t % 2 == 1 ? "1" : "0");
  }
  return s + " " + n.miter + "\n";
}

// The decimal number right after the first (or last) `marker` in `text`, 0 if none.
int NumberAfter(std::string_view text, std::string_view marker, bool last) {
  size_t at = last ? text.rfind(marker) : text.find(marker);
  if (at == std::string_view::npos) return 0;
  size_t begin = at + marker.size(), end = begin;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
  return static_cast<int>(ParseInt(text.substr(begin, end - begin), 0, 1000000).value_or(0));
}

// "** Trying induction with length N **": the last length tried.
int InductionLength(std::string_view text) {
  return NumberAfter(text, "Trying induction with length ", true);
}

// The steps every base case held for when the induction never closed. Yosys 0.23's
// `sat -tempinduct` says, for each length N it tries, "Base case for induction length N proven."
// and, when N reaches -maxsteps without an induction step holding, "Reached maximum number of
// time steps -> proof failed." (its "proved base case for N steps: SUCCESS!" line comes only
// with -tempinduct-baseonly, which this script does not pass). 0 unless both are there.
int BaseCaseSteps(std::string_view text) {
  if (text.find("Reached maximum number of time steps") == std::string_view::npos) return 0;
  return NumberAfter(text, "Base case for induction length ", true);
}

}  // namespace

// The CPU-time limit ended Yosys: the step itself (its cpu_limit_ms or RLIMIT_CPU), or the
// first Yosys under the shell (which then exits 128 + SIGXCPU).
bool YosysOutOfCpu(const sandbox::StepResult& step) {
  return EndedByCpuLimit(step) ||
         (step.outcome() == sandbox::StepResult::EXITED && step.exit_code() == 128 + SIGXCPU);
}

// A line that says why Yosys stopped, from the step's output.
std::string YosysError(const std::string& output) {
  for (auto line : py::SplitFileLines(output))
    if (line.find("ERROR") != std::string_view::npos) return std::string(line.substr(0, 300));
  return "yosys produced no result";
}

std::string ForYosys(const std::string& text) {
  return RenameIdentifier(StripAttributes(text), "always_comb", "always @*");
}

std::string_view FormalOutcomeName(FormalOutcome outcome) {
  switch (outcome) {
    case FormalOutcome::kNotRun:
      return "not_run";
    case FormalOutcome::kProven:
      return "proven";
    case FormalOutcome::kBounded:
      return "bounded";
    case FormalOutcome::kCounterexample:
      return "counterexample";
    case FormalOutcome::kUnknown:
      return "unknown";
  }
  return "unknown";
}

FormalNames FormalFileNames(const std::string& nonce) {
  return {"gold_" + nonce, "miter_" + nonce, "gold_" + nonce + ".sv", "gate_" + nonce + ".sv"};
}

void SetYosysStepLimits(uint32_t cpu_seconds, uint32_t timeout_ms, uint64_t address_space,
                        sandbox::StepSpec* step) {
  step->set_cpu_seconds(cpu_seconds);
  step->set_timeout_ms(timeout_ms);
  step->set_max_output_bytes(256 * 1024);
  step->set_address_space_bytes(address_space);
  step->set_file_size_bytes(64u << 20);
  step->set_max_processes(16);
  step->set_max_open_files(256);
}

bool HasClockPort(const std::string& reference) {
  return RenameIdentifier(reference, "clk", "") != reference;
}

sandbox::JobRequest BuildFormalJob(const Problem& problem, const std::string& design,
                                   const std::string& nonce, const FormalOptions& options) {
  const FormalNames n = FormalFileNames(nonce);
  const bool has_clk = HasClockPort(problem.reference);
  sandbox::JobRequest job;
  auto& files = *job.mutable_files();
  const bool assumes = !problem.assumptions.empty();
  files[n.reference_file] = WithAssumptions(
      ForYosys(RenameIdentifier(problem.reference, "RefModule", n.reference_module)),
      n.reference_module, problem.assumptions);
  files[n.design_file] = ForYosys(design);
  files[kCycleScript] =
      SatScript(n, false, options.bound_cycles, has_clk, assumes, options, kCycleResult);
  files[kClockScript] =
      SatScript(n, true, 2 * options.bound_cycles, has_clk, assumes, options, kClockResult);
  auto* step = job.add_steps();
  step->add_argv("/bin/sh");
  step->add_argv("-c");
  // The cycle model first; where its assertions fail (or anything else does), the clock-phase
  // model, and only the result of the script that ran to its end is kept.
  // Yosys exits 1 on a failed assertion (or any error, which the second script then reports);
  // a run stopped by its budget is not tried again.
  step->add_argv(std::string("yosys -q -s ") + kCycleScript +
                 " >/dev/null 2>&1; rc=$?; if [ $rc -eq 1 ]; then rm -f " + kCycleResult +
                 "; exec yosys -q -s " + kClockScript + "; fi; exit $rc");
  // The solver's own timeout says so in its output; the CPU limit ends whatever else runs long.
  SetYosysStepLimits(options.cpu_seconds, (2 * options.cpu_seconds + 30) * 1000,
                     options.address_space, step);
  job.add_collect(kCycleResult);
  job.add_collect(kClockResult);
  job.set_collect_max_bytes(kMaxResultBytes);
  return job;
}

std::vector<TraceStep> ParseSatTable(std::string_view text) {
  std::vector<TraceStep> steps;
  for (auto line : py::SplitFileLines(text)) {
    std::vector<std::string_view> f = py::SplitBlanks(line);
    if (f.size() < 3 || f[1].empty() || f[1][0] != '\\') continue;
    const int64_t step = ParseInt(f[0], 1, 100000).value_or(0);
    if (step == 0) continue;
    std::string_view value = f.back();
    if (value.empty() || value.find_first_not_of("01xXzZ") != std::string_view::npos) continue;
    if (static_cast<size_t>(step) > steps.size()) {
      if (static_cast<size_t>(step) != steps.size() + 1) continue;  // rows come in step order
      steps.emplace_back();
    }
    TraceStep& s = steps[static_cast<size_t>(step) - 1];
    std::string_view name = f[1].substr(1);
    auto add = [&](std::string_view prefix, auto& into) {
      if (!py::StartsWith(name, prefix)) return false;
      into.emplace_back(std::string(name.substr(prefix.size())), std::string(value));
      return true;
    };
    add("in_", s.inputs) || add("gold_", s.gold) || add("gate_", s.gate);
  }
  return steps;
}

FormalRun ParseFormalResponse(const sandbox::JobResponse& response, const FormalOptions& options) {
  FormalRun run;
  if (!response.error().empty() || response.steps_size() == 0) {
    run.reason = "sandbox: " + response.error();
    run.cacheable = false;
    return run;
  }
  const sandbox::StepResult& step = response.steps(0);
  run.seconds = step.wall_ms() / 1000.0;
  auto cycle = response.collected().find(kCycleResult);
  auto phases = response.collected().find(kClockResult);
  const bool is_cycle = cycle != response.collected().end();
  if (!is_cycle && phases == response.collected().end()) {
    if (step.outcome() == sandbox::StepResult::TIMED_OUT) {
      run.reason = "the wall-clock backstop ended yosys";
      run.cacheable = false;
    } else if (YosysOutOfCpu(step) || step.outcome() == sandbox::StepResult::SIGNALED) {
      run.out_of_budget = YosysOutOfCpu(step);
      run.reason = run.out_of_budget
                       ? "yosys ran out of its " + std::to_string(options.cpu_seconds) + " s budget"
                       : "yosys was stopped by signal " + std::to_string(step.signal());
    } else {
      run.reason = YosysError(step.output());
    }
    return run;
  }
  run.mode = is_cycle ? "cycle" : "clk2fflogic";
  const std::string& text = (is_cycle ? cycle : phases)->second;
  const int per_cycle = is_cycle ? 1 : 2;
  constexpr std::string_view kFound = "model found for base case: FAIL!";
  if (size_t found = text.find(kFound); found != std::string::npos) {
    // The table after this line is the counterexample; earlier ones are failed induction steps.
    run.trace = ParseSatTable(std::string_view(text).substr(found));
    if (run.trace.empty()) {
      run.reason = "yosys reported a difference but its trace could not be read";
      return run;
    }
    run.outcome = FormalOutcome::kCounterexample;  // a candidate until replayed
    run.bound = static_cast<int>((run.trace.size() + per_cycle - 1) / per_cycle);
  } else if (text.find("Induction step proven: SUCCESS!") != std::string::npos) {
    run.outcome = FormalOutcome::kProven;
    run.bound = std::max(1, InductionLength(text) / per_cycle);
  } else if (int steps = BaseCaseSteps(text); steps > 0) {
    run.outcome = FormalOutcome::kBounded;
    run.bound = steps / per_cycle;
  } else if (text.find("TIMEOUT!") != std::string::npos || YosysOutOfCpu(step)) {
    run.out_of_budget = true;
    run.reason = "the solver ran out of its " + std::to_string(options.cpu_seconds) + " s budget";
  } else {
    run.reason = step.outcome() == sandbox::StepResult::EXITED && step.exit_code() == 0
                     ? "yosys ended without a conclusion"
                     : YosysError(step.output());
  }
  return run;
}

}  // namespace evald
