#include "harness/grader.h"

#include <signal.h>

#include <cstdint>

#include "base/hash.h"
#include "base/py_text.h"
#include "harness/failure_category.h"
#include "harness/icarus_invocation.h"
#include "harness/integrity_check.h"
#include "harness/result_line.h"
#include "harness/self_checking_bench.h"
#include "harness/verilog_lexer.h"

namespace evald {

namespace {

using sandbox::StepResult;

constexpr size_t kMaxLogBytes = 64 * 1024;

struct ResultLines {
  int tagged = 0;
  int untagged = 0;
  int mismatches = -1;
  int samples = -1;
  bool tagged_timeout = false;
  bool output_after_result = false;  // a line other than the simulator's own after the result
};

// Lines a simulator prints on its own after the testbench's final block.
bool SimulatorTrailer(std::string_view line) {
  return py::StartsWith(line, "- S i m u l a t i o n") || py::StartsWith(line, "- Verilator:");
}

int ClampToInt(int64_t v) {
  return v < 0 || v > INT32_MAX ? -1 : static_cast<int>(v);
}

// The verdict travels on standard error, tagged; the design can print only to standard output.
// Any result line other than the one tagged one is a forgery attempt, on either stream.
ResultLines ScanOutput(const std::string& out, const std::string& err, const std::string& tag) {
  ResultLines r;
  const std::string prefix = tag + " ";
  for (auto line : py::SplitFileLines(err)) {
    bool is_tagged = py::StartsWith(line, prefix);
    std::string_view body = is_tagged ? line.substr(prefix.size()) : line;
    if (r.tagged > 0 && !py::Strip(line).empty() && !SimulatorTrailer(line))
      r.output_after_result = true;
    if (is_tagged && py::StartsWith(body, "TIMEOUT")) r.tagged_timeout = true;
    auto counts = FindResultLine(body);
    if (!counts) continue;
    if (!is_tagged) {
      ++r.untagged;
      continue;
    }
    ++r.tagged;
    r.output_after_result = false;  // judged from the last tagged line on
    r.mismatches = ClampToInt(counts->mismatches);
    r.samples = ClampToInt(counts->samples);
  }
  for (auto line : py::SplitFileLines(out))
    if (FindResultLine(line) || line.find(tag) != std::string_view::npos) ++r.untagged;
  return r;
}

// Limits the log we keep to its head and tail.
std::string Bound(std::string s) {
  if (s.size() <= kMaxLogBytes) return s;
  return s.substr(0, kMaxLogBytes / 2) + "\n[... " + std::to_string(s.size() - kMaxLogBytes) +
         " bytes omitted ...]\n" + s.substr(s.size() - kMaxLogBytes / 2);
}

std::string FirstErrorLine(const std::string& log) {
  for (auto line : py::SplitFileLines(log)) {
    if (line.find("error") != std::string_view::npos ||
        line.find("Error") != std::string_view::npos ||
        line.find("sorry") != std::string_view::npos)
      return std::string(line.substr(0, 300));
  }
  auto lines = py::SplitFileLines(log);
  return lines.empty() ? std::string() : std::string(lines.front().substr(0, 300));
}

// RLIMIT_AS makes allocation fail inside the tool, which then aborts or crashes on its own
// (vvp: SIGABRT). A failed step whose resident memory reached most of its address-space limit
// ran out of memory.
bool NearMemoryLimit(const StepResult& step, uint64_t address_space) {
  return address_space > 0 && step.max_rss_kb() * 1024 >= address_space / 4 * 3;
}

std::string Times(const StepResult& step) {
  return " (" + std::to_string(step.cpu_ms() / 1000.0).substr(0, 5) + " s CPU, " +
         std::to_string(step.wall_ms() / 1000.0).substr(0, 5) + " s wall)";
}

// A step that ended for a reason other than its own exit: a sandbox limit or the wall clock.
bool LimitVerdict(const StepResult& step, bool oom, uint64_t address_space, const char* what,
                  Verdict* v) {
  bool failed = !(step.outcome() == StepResult::EXITED && step.exit_code() == 0);
  if (failed && oom) {  // the cgroup's OOM killer acted during this job: L, whatever the status
    v->category = category::kResourceLimit;
    v->detail = std::string(what) + " was killed by the memory limit";
    v->cacheable = false;
    return true;
  }
  const std::string& out = step.output();
  bool says_oom = out.find("std::bad_alloc") != std::string::npos ||
                  out.find("ran out of memory") != std::string::npos ||
                  out.find("virtual memory exhausted") != std::string::npos ||
                  out.find("Cannot allocate memory") != std::string::npos;
  if (failed && step.outcome() != StepResult::TIMED_OUT &&
      step.outcome() != StepResult::OUTPUT_LIMIT &&
      (says_oom || NearMemoryLimit(step, address_space))) {
    v->category = category::kResourceLimit;
    v->detail = std::string(what) + " ran out of memory (" +
                std::to_string(step.max_rss_kb() / 1024) + " MiB resident)";
    return true;
  }
  switch (step.outcome()) {
    case StepResult::TIMED_OUT:
      // The wall clock depends on what else runs: reported, never cached.
      v->category = category::kTimeout;
      v->detail = std::string(what) + " exceeded its wall-clock backstop" + Times(step);
      v->cacheable = false;
      v->wall_clock_backstop = true;
      return true;
    case StepResult::OUTPUT_LIMIT:
      v->category = category::kResourceLimit;
      v->detail = std::string(what) + " exceeded the output limit";
      return true;
    case StepResult::CPU_LIMIT:
    case StepResult::SIGNALED:
      if (EndedByCpuLimit(step)) {
        v->category = category::kTimeout;
        v->detail = std::string(what) + " exceeded its CPU-time limit" + Times(step);
      } else if (step.signal() == SIGXFSZ) {
        v->category = category::kResourceLimit;
        v->detail = std::string(what) + " exceeded the file-size limit";
      } else if (step.signal() == SIGKILL) {
        v->category = category::kResourceLimit;
        v->detail = std::string(what) + " was killed (memory limit)";
        v->cacheable = false;
      } else {
        return false;
      }
      return true;
    case StepResult::START_FAILED:
      v->category = category::kInternalError;
      v->detail = std::string(what) + " could not be started: " + step.output();
      v->cacheable = false;
      return true;
    default:
      return false;
  }
}

// A self-checking testbench's problem states port widths in prose, and not always (RTLLM's RAM
// leaves its address width to the designer): there the testbench decides whether a width
// works, as upstream's harness lets it. Names and directions are compared either way.
ModuleInterface WithoutWidths(ModuleInterface interface) {
  for (auto& port : interface.ports) port.width.reset();
  return interface;
}

// The design's interface against the reference's, on the text that is compiled.
void CheckInterface(const ModuleInterface& reference, const GradingSetup& setup,
                    const std::string& compiled, DesignRun* run) {
  const std::string& module = setup.design_module;
  InterfaceReading reading = ReadModuleInterface(compiled, module);
  switch (reading.outcome) {
    case InterfaceReading::Outcome::kFound: {
      std::string difference =
          setup.IsVerilogEval()
              ? InterfaceDifference(reference, reading.interface)
              : InterfaceDifference(WithoutWidths(reference), WithoutWidths(reading.interface));
      if (!difference.empty())
        run->integrity = {true, "the interface differs from the reference's: " + difference};
      return;
    }
    case InterfaceReading::Outcome::kDefinedTwice:
      run->integrity = {true, reading.problem};
      return;
    case InterfaceReading::Outcome::kUnreadable:
      run->interface_unverified = "its port list could not be read (" + reading.problem + ")";
      return;
    case InterfaceReading::Outcome::kNotFound:
      run->interface_unverified = "it defines no module " + module;
      return;
  }
}

// Runs the simulator's preprocessor over the design in the sandbox and checks its output; on
// success `*design_out` is the text to compile. False when the run stops here.
bool PreprocessAndCheck(SandboxWorker& worker, SimulatorKind simulator,
                        const SimulatorLimits& limits, const std::string& design, DesignRun* run,
                        std::string* design_out) {
  auto response = worker.Run(BuildPreprocessJob(simulator, design, run->nonce, limits));
  run->oom_killed = worker.last_job_oom_killed();
  if (!response.ok()) {
    run->status = response.status();
    return false;
  }
  if (!response->error().empty() || response->steps_size() == 0) {
    run->status = Status::Internal("sandbox: " + response->error());
    return false;
  }
  run->ipc_objects_left += response->ipc_objects_removed();
  run->preprocessed = true;
  run->preprocess = response->steps(0);
  const auto& step = run->preprocess;
  if (step.outcome() != sandbox::StepResult::EXITED || step.exit_code() != 0) {
    // Icarus's driver adds its line to a failed preprocessor's messages; the benchmark's log
    // (and its letter) carry it.
    if (simulator == SimulatorKind::kIcarus && (step.outcome() == sandbox::StepResult::EXITED ||
                                                step.outcome() == sandbox::StepResult::SIGNALED ||
                                                step.outcome() == sandbox::StepResult::CPU_LIMIT))
      run->preprocess.mutable_output()->append(kIcarusPreprocessFailed);
    return false;
  }
  const std::string file = JobFileNames(run->nonce).preprocessed;
  auto it = response->collected().find(file);
  if (it == response->collected().end()) {
    run->preprocessed_oversized = !response->collect_oversized().empty();
    if (!run->preprocessed_oversized) run->status = Status::Internal("preprocessor wrote nothing");
    return false;
  }
  std::string compiled = CompiledText(it->second);
  run->integrity = CheckCompiledDesign(compiled);
  if (run->integrity.violation) {
    run->integrity.reason = "after preprocessing, " + run->integrity.reason;
    return false;
  }
  *design_out = std::move(compiled);
  return true;
}

}  // namespace

std::string CompiledText(const std::string& preprocessed) {
  // Line ends as the simulators' preprocessors read them (ivlpp takes a lone carriage return
  // for one): no byte is left whose meaning a lexer could read another way.
  return StripComments(py::TranslateNewlines(preprocessed));
}

DesignRun RunDesign(SandboxWorker& worker, SimulatorKind simulator, const SimulatorLimits& limits,
                    const Problem& problem, const std::string& design) {
  DesignRun run;
  run.limits = limits;
  run.nonce = RandomHex(8);
  const std::string secret = RandomHex(kResultSecretLength / 2);
  auto bench = HardenFor(problem, run.nonce, limits.stop_at_first_mismatch);
  if (!bench.ok()) {
    run.bench_status = bench.status();
    return run;
  }
  run.tag = ResultTag(secret);
  run.stopped_at_first_mismatch = bench->stops_at_first_mismatch;
  run.pass_lines = bench->pass_lines;
  run.pass_texts = bench->pass_texts;
  if (simulator == SimulatorKind::kVerilator && !worker.layers().ContainsNativeCode()) {
    run.status = Status::Unavailable("refusing to run Verilator outside a complete sandbox (" +
                                     worker.layers().Describe() + ")");
    return run;
  }
  // The text as written first (no tool runs for a design refused outright), then what the
  // simulator's preprocessor makes of it, which is what gets compiled, then its interface.
  run.integrity = CheckDesignIntegrity(design);
  if (run.integrity.violation) return run;
  std::string compiled;
  if (!PreprocessAndCheck(worker, simulator, limits, design, &run, &compiled)) return run;
  CheckInterface(bench->interface, problem.setup, compiled, &run);
  if (run.integrity.violation) return run;
  auto response =
      worker.Run(BuildSimulationJob(simulator, *bench, compiled, run.nonce, secret, limits));
  run.oom_killed = worker.last_job_oom_killed();
  if (!response.ok()) {
    run.status = response.status();
  } else {
    run.ipc_objects_left += response->ipc_objects_removed();
    run.response = std::move(*response);
  }
  run.compiled = std::move(compiled);
  return run;
}

StatusOr<std::string> CheckedDesignText(SandboxWorker& worker, SimulatorKind simulator,
                                        const SimulatorLimits& limits, const std::string& design) {
  DesignRun run;
  run.nonce = RandomHex(8);
  run.integrity = CheckDesignIntegrity(design);
  if (run.integrity.violation) return Status::InvalidArgument(run.integrity.reason);
  std::string compiled;
  if (!PreprocessAndCheck(worker, simulator, limits, design, &run, &compiled)) {
    if (!run.status.ok()) return run.status;
    return Status::InvalidArgument(run.integrity.violation ? run.integrity.reason
                                                           : "the preprocessor refused the design");
  }
  return compiled;
}

GradedRun RunAndClassify(SandboxWorker& worker, SimulatorKind simulator,
                         const SimulatorLimits& limits, const Problem& problem,
                         const std::string& design, const Calibration* calibration) {
  GradedRun g;
  for (int attempt = 1;; ++attempt) {
    g.run = RunDesign(worker, simulator, limits, problem, design);
    g.verdict = ClassifyRun(g.run, simulator, design, calibration);
    if (!g.verdict.wall_clock_backstop) return g;
    if (attempt == kWallClockAttempts) break;
    ++g.wall_clock_retries;
  }
  g.verdict.category = category::kInternalError;
  g.verdict.passed = false;
  g.verdict.detail = "not graded: the machine is too loaded (" + g.verdict.detail + ", " +
                     std::to_string(kWallClockAttempts) + " times)";
  return g;
}

Verdict GradeDesign(SandboxWorker& worker, SimulatorKind simulator, const SimulatorLimits& limits,
                    const Problem& problem, const std::string& design,
                    const Calibration* calibration) {
  return RunAndClassify(worker, simulator, limits, problem, design, calibration).verdict;
}

namespace {

// Verdicts decided before anything was compiled: testbench, sandbox, integrity, calibration,
// preprocessor. True when `v` is final.
bool ClassifyBeforeCompile(const DesignRun& run, SimulatorKind simulator,
                           const Calibration* calibration, Verdict* v) {
  if (!run.bench_status.ok()) {
    v->category = category::kUngradable;
    v->detail = run.bench_status.message();
    return true;
  }
  if (!run.status.ok()) {
    v->cacheable = false;
    if (run.oom_killed) {
      v->category = category::kResourceLimit;
      v->detail = "killed by the sandbox memory limit";
    } else {
      v->category = category::kInternalError;
      v->detail = run.status.ToString();
    }
    return true;
  }
  if (run.integrity.violation) {
    v->category = category::kIntegrity;
    v->detail = run.integrity.reason;
    return true;
  }
  if (calibration != nullptr && !calibration->gradable) {
    v->category = category::kUngradable;
    v->detail = "problem cannot be graded with " + std::string(SimulatorName(simulator)) + ": " +
                calibration->note;
    return true;
  }
  if (run.preprocessed_oversized) {
    v->category = category::kResourceLimit;
    v->detail =
        "the preprocessed design is over " + std::to_string(kMaxPreprocessedBytes) + " bytes";
    return true;
  }
  const StepResult& pp = run.preprocess;
  if (!run.preprocessed || (pp.outcome() == StepResult::EXITED && pp.exit_code() == 0))
    return false;
  v->log = Bound(py::ReplaceAll(pp.output(), "_" + run.nonce, ""));
  v->benchmark = BenchmarkLogCategory(v->log);
  if (LimitVerdict(pp, run.oom_killed, kPreprocessAddressSpace, "preprocessing", v)) return true;
  // A preprocessor that exits on its own at its CPU-time limit (or Verilator's, whose children
  // report a SIGXCPU as a plain failure): its CPU time says what happened.
  if (pp.cpu_ms() + 50 >= uint64_t{kPreprocessCpuSeconds} * 1000) {
    v->category = category::kTimeout;
    v->detail = "preprocessing exceeded its CPU-time limit" + Times(pp);
    return true;
  }
  const char c = v->benchmark;
  v->category = (c == '?' || c == '.' || c == 'T') ? category::kCompileOther : c;
  v->detail = "preprocessing failed: " + FirstErrorLine(v->log);
  return true;
}

// Endings both kinds of testbench share. Each is true when it decided `v`.
bool SimulatorDied(const StepResult& sim, Verdict* v) {
  if (sim.outcome() != StepResult::SIGNALED) return false;
  v->category = category::kRuntimeMismatch;
  v->detail = "simulator died with signal " + std::to_string(sim.signal());
  return true;
}

bool SimulatorExitedWithError(const StepResult& sim, Verdict* v) {
  if (sim.exit_code() == 0) return false;
  v->category = category::kRuntimeMismatch;
  v->detail = "simulator exited with status " + std::to_string(sim.exit_code());
  return true;
}

// It passed against a port list evald could not read: a pass needs a checked interface.
bool InterfaceUnverified(const DesignRun& run, Verdict* v) {
  if (run.interface_unverified.empty()) return false;
  v->category = category::kIntegrity;
  v->detail =
      "the interface could not be checked against the reference's: " + run.interface_unverified;
  return true;
}

// The verdict from a self-checking testbench's tagged pass and failure lines.
void ClassifyPassLines(const DesignRun& run, const StepResult& sim, const Calibration* calibration,
                       Verdict* v) {
  PassLines lines = ScanPassLines(sim.output(), sim.error_output(), run.tag, run.pass_texts);
  v->samples_checked = lines.pass;
  v->mismatches = lines.fail;
  if (lines.forged > 0) {
    v->category = category::kIntegrity;
    v->detail =
        "the output carries the testbench's pass line, printed by the design (forged "
        "result)";
    return;
  }
  if (SimulatorDied(sim, v)) return;
  if (lines.fail > 0) {
    v->category = category::kRuntimeMismatch;
    v->detail = "the testbench reports a failure: " + lines.first_fail;
    return;
  }
  if (lines.pass == 0) {
    v->category = category::kRuntimeMismatch;
    v->detail = "simulation ended without the testbench's pass line";
    return;
  }
  if (SimulatorExitedWithError(sim, v)) return;
  if (calibration == nullptr) {
    v->passed = true;
    v->category = category::kPass;
    v->detail = "reference passes its testbench";
    return;
  }
  if (lines.pass != calibration->samples_checked) {
    v->category = category::kRuntimeMismatch;
    v->detail = "the testbench printed its pass line " + std::to_string(lines.pass) +
                " times, for the reference " + std::to_string(calibration->samples_checked);
    return;
  }
  if (InterfaceUnverified(run, v)) return;
  v->passed = true;
  v->category = category::kPass;
  v->detail = "pass";
}

// The verdict from the simulation's output once it compiled and ran.
void ClassifySimulation(const DesignRun& run, const StepResult& sim, const std::string& design,
                        const std::string& log, const Calibration* calibration, Verdict* v) {
  ResultLines res = ScanOutput(sim.output(), sim.error_output(), run.tag);
  v->mismatches = res.mismatches;
  v->samples_checked = res.samples;
  v->testbench_timeout = res.tagged_timeout;
  if (res.untagged > 0 || res.tagged > 1) {
    v->category = category::kIntegrity;
    v->detail = "the output carries a result line the testbench did not print (forged result)";
    return;
  }
  if (res.output_after_result) {
    v->category = category::kIntegrity;
    v->detail = "output after the testbench's result line (it must be the last)";
    return;
  }
  if (SimulatorDied(sim, v)) return;
  if (res.tagged == 0) {
    v->category = category::kRuntimeMismatch;
    v->detail = "simulation ended without the testbench's result line";
    return;
  }
  if (SimulatorExitedWithError(sim, v)) return;
  if (calibration == nullptr) {
    // Grading the reference itself: it defines M and whether TIMEOUT is the testbench's.
    v->passed = res.mismatches == 0;
    v->category = v->passed ? category::kPass : category::kRuntimeMismatch;
    v->detail = v->passed ? "reference passes its testbench"
                          : "reference reports " + std::to_string(res.mismatches) + " mismatches";
    return;
  }
  if (res.tagged_timeout && !calibration->testbench_timeout) {
    v->category = category::kTimeout;
    v->detail = "the testbench's TIMEOUT fired";
    return;
  }
  if (res.mismatches != 0) {
    char c = BenchmarkRuntimeCategory(design);
    // An always block that never triggers explains the mismatches better than 'R'.
    if (BenchmarkLogCategory(log) == category::kNoSensitivities) c = category::kNoSensitivities;
    v->category = c;
    v->mismatches_lower_bound = run.stopped_at_first_mismatch;
    v->detail =
        run.stopped_at_first_mismatch
            ? "mismatch at sample " + std::to_string(res.samples) +
                  " (the simulation stopped at the first; --exact-counts for the total)"
            : (res.mismatches < 0 ? std::string("too many") : std::to_string(res.mismatches)) +
                  " mismatches in " + std::to_string(res.samples) + " samples";
    if (run.stopped_at_first_mismatch && calibration->testbench_timeout) {
      // The testbench's TIMEOUT fires at a fixed simulated time, where the reference's run
      // ends: run on, this design's log would carry it too, and the benchmark's analysis reads
      // any log with TIMEOUT as 'T'. That letter, without the rest of the run to pay for it.
      v->benchmark = category::kTimeout;
      v->detail +=
          "; the benchmark's full run ends at the testbench's TIMEOUT (T), as the "
          "reference's does";
    }
    return;
  }
  if (res.samples != calibration->samples_checked) {
    v->category = category::kRuntimeMismatch;
    v->detail = "the testbench checked " + std::to_string(res.samples) +
                " samples, the reference " + std::to_string(calibration->samples_checked) +
                " (simulation ended early)";
    return;
  }
  if (InterfaceUnverified(run, v)) return;
  v->passed = true;
  v->category = category::kPass;
  v->detail =
      res.tagged_timeout ? "pass (the testbench's TIMEOUT fires for the reference too)" : "pass";
}

}  // namespace

Verdict ClassifyRun(const DesignRun& run, SimulatorKind simulator, const std::string& design,
                    const Calibration* calibration) {
  Verdict v;
  v.cacheable = run.ipc_objects_left == 0 && !run.oom_killed;
  if (ClassifyBeforeCompile(run, simulator, calibration, &v)) return v;
  const std::string& nonce = run.nonce;
  const auto& steps = run.response.steps();
  if (steps.empty()) {
    v.detail = "sandbox returned no step results";
    v.cacheable = false;
    return v;
  }
  const StepResult compile = CompilePhase(run.response, simulator);
  const int sim_index = CompileStepCount(simulator);
  const bool simulated = run.response.steps_size() > sim_index;
  std::string log = compile.output();
  if (simulated) log += steps[sim_index].output() + steps[sim_index].error_output();
  log = py::ReplaceAll(log, run.tag + " ", "");
  // Keep only the design's own module names in messages.
  log = py::ReplaceAll(log, "_" + nonce, "");
  v.log = Bound(log);
  v.benchmark = run.pass_lines ? RtllmUpstreamLetter(false, "") : BenchmarkVerdict(log, design);
  v.compile_seconds = compile.wall_ms() / 1000.0;

  if (LimitVerdict(compile, run.oom_killed, run.limits.compile_address_space, "compilation", &v))
    return v;
  if (CompileExceededCpu(compile, run.limits)) {
    v.category = category::kTimeout;
    v.detail = "compilation exceeded its CPU-time limit" + Times(compile);
    return v;
  }
  if (compile.outcome() != StepResult::EXITED || compile.exit_code() != 0 || !simulated) {
    char c = BenchmarkLogCategory(compile.output());
    if (c == '?' || c == '.' || c == 'T') c = category::kCompileOther;
    v.category = c;
    v.detail =
        "compile failed: " + py::ReplaceAll(FirstErrorLine(compile.output()), "_" + nonce, "");
    return v;
  }
  const StepResult& sim = steps[sim_index];
  if (run.pass_lines) {
    // What upstream reads: the simulation's output, the testbench's lines as it prints them.
    std::string printed = sim.output() + sim.error_output();
    for (const char* label : {" PASS ", " FAIL "})
      printed = py::ReplaceAll(printed, run.tag + label, "");
    v.benchmark = RtllmUpstreamLetter(true, printed);
  }
  v.simulate_seconds = sim.wall_ms() / 1000.0;
  v.simulate_cpu_seconds = sim.cpu_ms() / 1000.0;
  if (LimitVerdict(sim, run.oom_killed, run.limits.simulate_address_space, "simulation", &v))
    return v;
  if (run.pass_lines) {
    ClassifyPassLines(run, sim, calibration, &v);
  } else {
    ClassifySimulation(run, sim, design, log, calibration, &v);
  }
  return v;
}

}  // namespace evald
