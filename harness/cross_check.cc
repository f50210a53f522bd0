#include "harness/cross_check.h"

#include <set>

#include "base/hash.h"
#include "base/verilog_identifier.h"
#include "harness/counterexample_replay.h"
#include "harness/formal_fidelity.h"
#include "harness/grader.h"
#include "harness/judge_renaming.h"
#include "harness/testbench_hardening.h"

namespace evald {

namespace {

// Bump when the formal scripts, the replay or the synthesis flow change.
// 2: bounded read from what Yosys prints; no clock edge at the replay's time 0; attributes
// stripped for Yosys; the problem's input assumptions.
// 3: designs outside formal_fidelity.h's allow-list are not judged.
constexpr int kCrossCheckRulesVersion = 3;

// What the solver claimed: each output that differs at the candidate's last step.
std::string SolverStory(const FormalRun& run) {
  const TraceStep& last = run.trace.back();
  std::string s = "the solver found a difference at step " + std::to_string(run.trace.size());
  for (size_t i = 0; i < last.gold.size() && i < last.gate.size(); ++i) {
    if (last.gold[i].second == last.gate[i].second) continue;
    s += ", " + last.gold[i].first + " reference=" + last.gold[i].second.substr(0, 64) +
         " design=" + last.gate[i].second.substr(0, 64);
  }
  return s;
}

FormalVerdict FromRun(const FormalRun& run) {
  FormalVerdict v;
  v.outcome = run.outcome;
  v.mode = run.mode;
  v.bound = run.bound;
  v.detail = run.reason;
  v.seconds = run.seconds;
  v.cacheable = run.cacheable;
  v.out_of_budget = run.out_of_budget;
  return v;
}

FormalRun RunFormalJob(SandboxWorker& worker, const Problem& problem, const std::string& design,
                       const FormalOptions& options) {
  sandbox::JobRequest job = BuildFormalJob(problem, design, RandomHex(8), options);
  auto response = worker.Run(job);
  if (!response.ok()) {
    FormalRun run;
    run.reason = "sandbox: " + response.status().message();
    run.cacheable = false;
    return run;
  }
  return ParseFormalResponse(*response, options);
}

// A self-checking benchmark's problem in the shape formal and its replay read (verilog-eval's):
// the reference's top named RefModule and its other names made the judge's (a design's own
// `full_adder` must not clash with the reference's), the design's module under test TopModule.
struct VerilogEvalShape {
  Problem problem;
  std::string design;
};
VerilogEvalShape InVerilogEvalShape(const Problem& problem, const std::string& design) {
  const GradingSetup& setup = problem.setup;
  if (setup.IsVerilogEval()) return {problem, design};
  VerilogEvalShape shape{problem, RenameIdentifier(design, setup.design_module, "TopModule")};
  std::set<std::string, std::less<>> keep = {setup.reference_module};
  const InterfaceReading ports = ReadModuleInterface(problem.reference, setup.reference_module);
  for (const auto& p : ports.interface.ports) keep.insert(p.name);
  shape.problem.reference = RenameIdentifier(RenameJudgeNames(problem.reference, keep, "judge"),
                                             setup.reference_module, "RefModule");
  shape.problem.setup = GradingSetup{};
  return shape;
}

FormalVerdict CheckShapedEquivalence(SandboxWorker& worker, const Problem& problem,
                                     const std::string& design, const FormalOptions& options,
                                     const SimulatorLimits& replay_limits) {
  // What Yosys would read differently from the simulator is not judged at all: a proof of
  // another design would make a strict pass of this one.
  if (FidelityFinding f = CheckFormalFidelity(design); !f.faithful) {
    FormalVerdict v;
    v.outcome = FormalOutcome::kUnknown;
    v.detail = "formal does not model this design as the simulator runs it: " + f.reason;
    return v;
  }
  FormalRun run = RunFormalJob(worker, problem, design, options);
  // A run the machine ended (the wall-clock backstop, a sandbox fault) says nothing about the
  // design: tried again, as a simulation is (grader.h kWallClockAttempts).
  for (int attempt = 1; !run.cacheable && attempt < kWallClockAttempts; ++attempt)
    run = RunFormalJob(worker, problem, design, options);
  FormalVerdict v = FromRun(run);
  if (run.outcome != FormalOutcome::kCounterexample) return v;
  // A candidate counts only when simulation shows it.
  ReplayResult replay = ReplayCounterexample(worker, problem, design, run, replay_limits);
  if (replay.ran && replay.differing_steps > 0) {
    v.detail = "replayed in simulation: " + replay.first_difference;
    return v;
  }
  v.outcome = FormalOutcome::kUnknown;
  v.cacheable = !replay.fault;
  v.detail = SolverStory(run) + "; " +
             (replay.ran ? "the replay in simulation shows no difference"
                         : "the replay did not run: " + replay.problem);
  return v;
}

}  // namespace

FormalVerdict CheckEquivalence(SandboxWorker& worker, const Problem& problem,
                               const std::string& design, const FormalOptions& options,
                               const SimulatorLimits& replay_limits) {
  const VerilogEvalShape shape = InVerilogEvalShape(problem, design);
  return CheckShapedEquivalence(worker, shape.problem, shape.design, options, replay_limits);
}

SynthStats Synthesize(SandboxWorker& worker, const std::string& design, const std::string& top,
                      uint32_t cpu_seconds) {
  sandbox::JobRequest job = BuildSynthesisJob(design, top, RandomHex(8), cpu_seconds);
  auto response = worker.Run(job);
  if (!response.ok()) {
    SynthStats s;
    s.problem = "sandbox: " + response.status().message();
    return s;
  }
  return ParseSynthesisResponse(*response);
}

namespace {

// The problem's input assumptions, one a line (part of the key: they decide the outcome).
std::string Assumptions(const Problem& problem) {
  std::string out;
  for (const std::string& a : problem.assumptions) out += a + "\n";
  return out;
}

}  // namespace

std::string CrossCheckKey(const std::string& yosys_version, const std::string& simulator_version,
                          const CrossCheckOptions& options, bool formal, bool synthesis,
                          const Problem& problem, const std::string& code) {
  const FormalOptions& f = options.formal_options;
  const std::string settings =
      std::string(formal ? "formal" : "-") + "/" + (synthesis ? "synth" : "-") + "/" +
      std::to_string(f.bound_cycles) + "/" + std::to_string(f.cpu_seconds) + "/" +
      std::to_string(f.address_space) + "/" + std::to_string(options.synthesis_cpu_seconds);
  return "xc-" + Sha256OfFields({"evald-cross-check", std::to_string(kCrossCheckRulesVersion),
                                 yosys_version, simulator_version, settings, problem.reference,
                                 Assumptions(problem), code});
}

sandbox::JobRequest BuildYosysVersionJob() {
  sandbox::JobRequest job;
  auto* step = job.add_steps();
  step->add_argv("yosys");
  step->add_argv("-V");
  step->set_timeout_ms(20000);
  step->set_cpu_seconds(10);
  step->set_max_output_bytes(64 * 1024);
  step->set_address_space_bytes(2ull << 30);
  step->set_file_size_bytes(1u << 20);
  step->set_max_processes(8);
  step->set_max_open_files(64);
  return job;
}

}  // namespace evald
