#include "harness/grader.h"

#include <signal.h>

#include <regex>

#include "evald/common/hash.h"
#include "evald/common/py_text.h"
#include "harness/failure_category.h"
#include "harness/integrity_check.h"

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
};

ResultLines ScanOutput(const std::string& output, const std::string& tag) {
  static const std::regex kLine(R"(Mismatches:\s*(\d+)\s+in\s+(\d+)\s+samples)");
  ResultLines r;
  for (auto line : py::SplitFileLines(output)) {
    std::match_results<std::string_view::const_iterator> m;
    bool is_tagged = py::StartsWith(line, tag + " ");
    std::string_view body = is_tagged ? line.substr(tag.size() + 1) : line;
    if (is_tagged && py::StartsWith(body, "TIMEOUT")) r.tagged_timeout = true;
    if (!std::regex_search(body.begin(), body.end(), m, kLine)) continue;
    if (!is_tagged) {
      ++r.untagged;
      continue;
    }
    ++r.tagged;
    try {
      r.mismatches = std::stoi(m[1].str());
      r.samples = std::stoi(m[2].str());
    } catch (...) {
      r.mismatches = r.samples = -1;
    }
  }
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

// A step that ended for a reason other than its own exit: a sandbox limit or the wall clock.
bool LimitVerdict(const StepResult& step, bool oom, uint64_t address_space, const char* what,
                  Verdict* v) {
  bool failed = !(step.outcome() == StepResult::EXITED && step.exit_code() == 0);
  const std::string& out = step.output();
  bool says_oom = out.find("std::bad_alloc") != std::string::npos ||
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
      v->category = category::kTimeout;
      v->detail = std::string(what) + " exceeded its wall-clock limit";
      return true;
    case StepResult::OUTPUT_LIMIT:
      v->category = category::kResourceLimit;
      v->detail = std::string(what) + " exceeded the output limit";
      return true;
    case StepResult::SIGNALED:
      if (step.signal() == SIGXCPU) {
        v->category = category::kTimeout;
        v->detail = std::string(what) + " exceeded its CPU-time limit";
      } else if (step.signal() == SIGXFSZ) {
        v->category = category::kResourceLimit;
        v->detail = std::string(what) + " exceeded the file-size limit";
      } else if (oom || step.signal() == SIGKILL) {
        v->category = category::kResourceLimit;
        v->detail = std::string(what) + " was killed by the memory limit";
      } else {
        return false;
      }
      return true;
    case StepResult::START_FAILED:
      v->category = category::kInternalError;
      v->detail = std::string(what) + " could not be started: " + step.output();
      return true;
    default:
      return false;
  }
}

}  // namespace

std::chrono::milliseconds JobDeadline(const SimulatorLimits& limits) {
  return std::chrono::milliseconds(static_cast<int64_t>(limits.compile_timeout_ms) +
                                   limits.simulate_timeout_ms + 15000);
}

DesignRun RunDesign(SandboxWorker& worker, SimulatorKind simulator, const SimulatorLimits& limits,
                    const Problem& problem, const std::string& design) {
  DesignRun run;
  run.limits = limits;
  run.nonce = RandomHex(8);
  auto bench = HardenTestbench(problem.testbench, problem.reference, run.nonce);
  if (!bench.ok()) {
    run.bench_status = bench.status();
    return run;
  }
  run.tag = bench->tag;
  if (simulator == SimulatorKind::kVerilator && !worker.layers().ContainsNativeCode()) {
    run.status = Status::Unavailable("refusing to run Verilator outside a complete sandbox (" +
                                     worker.layers().Describe() + ")");
    return run;
  }
  auto response = worker.Run(BuildSimulationJob(simulator, *bench, design, run.nonce, limits),
                             JobDeadline(limits));
  run.oom_killed = worker.last_job_oom_killed();
  if (!response.ok()) {
    run.status = response.status();
  } else {
    run.response = std::move(*response);
  }
  return run;
}

Verdict GradeDesign(SandboxWorker& worker, SimulatorKind simulator, const SimulatorLimits& limits,
                    const Problem& problem, const std::string& design,
                    const Calibration* calibration) {
  return ClassifyRun(RunDesign(worker, simulator, limits, problem, design), simulator, design,
                     calibration);
}

Verdict ClassifyRun(const DesignRun& run, SimulatorKind simulator, const std::string& design,
                    const Calibration* calibration) {
  Verdict v;
  if (!run.bench_status.ok()) {
    v.category = category::kUngradable;
    v.detail = run.bench_status.message();
    return v;
  }
  if (!run.status.ok()) {
    if (run.oom_killed) {
      v.category = category::kResourceLimit;
      v.detail = "killed by the sandbox memory limit";
    } else {
      v.category = category::kInternalError;
      v.detail = run.status.ToString();
    }
    return v;
  }
  const std::string& nonce = run.nonce;
  const sandbox::JobResponse* response = &run.response;
  const bool oom = run.oom_killed;
  const auto& steps = response->steps();
  if (steps.empty()) {
    v.detail = "sandbox returned no step results";
    return v;
  }
  const StepResult& compile = steps[0];
  std::string log = compile.output();
  if (steps.size() > 1) log += steps[1].output();
  log = py::ReplaceAll(log, run.tag + " ", "");
  // Keep only the design's own module names in messages.
  log = py::ReplaceAll(log, "_" + nonce, "");
  v.log = Bound(log);
  v.benchmark = BenchmarkVerdict(log, design);
  v.compile_seconds = compile.wall_ms() / 1000.0;

  auto integrity = CheckDesignIntegrity(design);
  if (integrity.violation) {
    v.category = category::kIntegrity;
    v.detail = integrity.reason;
    return v;
  }

  if (calibration != nullptr && !calibration->gradable) {
    v.category = category::kUngradable;
    v.detail = "problem cannot be graded with " + std::string(SimulatorName(simulator)) + ": " +
               calibration->note;
    return v;
  }

  if (LimitVerdict(compile, oom, run.limits.compile_address_space, "compilation", &v)) return v;
  if (compile.outcome() != StepResult::EXITED || compile.exit_code() != 0 || steps.size() < 2) {
    char c = BenchmarkLogCategory(compile.output());
    if (c == '?' || c == '.' || c == 'T') c = category::kCompileOther;
    v.category = c;
    v.detail =
        "compile failed: " + py::ReplaceAll(FirstErrorLine(compile.output()), "_" + nonce, "");
    return v;
  }

  const StepResult& sim = steps[1];
  v.simulate_seconds = sim.wall_ms() / 1000.0;
  if (LimitVerdict(sim, oom, run.limits.simulate_address_space, "simulation", &v)) return v;

  ResultLines res = ScanOutput(sim.output(), run.tag);
  v.mismatches = res.mismatches;
  v.samples_checked = res.samples;
  v.testbench_timeout = res.tagged_timeout;
  if (res.untagged > 0 || res.tagged > 1) {
    v.category = category::kIntegrity;
    v.detail = "the output carries a result line the testbench did not print (forged result)";
    return v;
  }
  if (sim.outcome() == StepResult::SIGNALED) {
    v.category = category::kRuntimeMismatch;
    v.detail = "simulator died with signal " + std::to_string(sim.signal());
    return v;
  }
  if (res.tagged == 0) {
    v.category = category::kRuntimeMismatch;
    v.detail = "simulation ended without the testbench's result line";
    return v;
  }
  if (sim.exit_code() != 0) {
    v.category = category::kRuntimeMismatch;
    v.detail = "simulator exited with status " + std::to_string(sim.exit_code());
    return v;
  }
  if (calibration == nullptr) {
    // Grading the reference itself: it defines M and whether TIMEOUT is the testbench's.
    v.passed = res.mismatches == 0;
    v.category = v.passed ? category::kPass : category::kRuntimeMismatch;
    v.detail = v.passed ? "reference passes its testbench"
                        : "reference reports " + std::to_string(res.mismatches) + " mismatches";
    return v;
  }
  if (res.tagged_timeout && !calibration->testbench_timeout) {
    v.category = category::kTimeout;
    v.detail = "the testbench's TIMEOUT fired";
    return v;
  }
  if (res.mismatches != 0) {
    char c = BenchmarkRuntimeCategory(design);
    // An always block that never triggers explains the mismatches better than 'R'.
    if (BenchmarkLogCategory(log) == category::kNoSensitivities) c = category::kNoSensitivities;
    v.category = c;
    v.detail = std::to_string(res.mismatches) + " mismatches in " + std::to_string(res.samples) +
               " samples";
    return v;
  }
  if (res.samples != calibration->samples_checked) {
    v.category = category::kRuntimeMismatch;
    v.detail = "the testbench checked " + std::to_string(res.samples) + " samples, the reference " +
               std::to_string(calibration->samples_checked) + " (simulation ended early)";
    return v;
  }
  v.passed = true;
  v.category = category::kPass;
  v.detail =
      res.tagged_timeout ? "pass (the testbench's TIMEOUT fires for the reference too)" : "pass";
  return v;
}

}  // namespace evald
