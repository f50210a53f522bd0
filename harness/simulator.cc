#include "harness/simulator.h"

#include <signal.h>

#include <algorithm>
#include <cstdint>

#include "harness/icarus_invocation.h"

namespace evald {

StatusOr<SimulatorKind> ParseSimulator(std::string_view name) {
  if (name == "iverilog" || name == "icarus") return SimulatorKind::kIcarus;
  if (name == "verilator") return SimulatorKind::kVerilator;
  return Status::InvalidArgument("unknown simulator '" + std::string(name) +
                                 "' (expected iverilog or verilator)");
}

std::string_view SimulatorName(SimulatorKind kind) {
  return kind == SimulatorKind::kIcarus ? "iverilog" : "verilator";
}

SimulatorLimits DefaultLimits(SimulatorKind kind) {
  SimulatorLimits l;
  if (kind == SimulatorKind::kVerilator) {
    l.compile_timeout_ms = 180000;  // a C++ build per sample; 3.5 s median on one core
    l.compile_address_space = 8ull << 30;
    l.max_processes = 128;
  }
  return l;
}

JobFiles JobFileNames(const std::string& nonce) {
  return {"design_" + nonce + ".sv", "test_" + nonce + ".sv", "ref_" + nonce + ".sv",
          "sim_" + nonce, "design_" + nonce + ".pp.sv"};
}

uint32_t SimulateCpuSeconds(const SimulatorLimits& limits) {
  return std::max<uint32_t>(1, (limits.simulate_timeout_ms + 999) / 1000) + 1;
}

uint32_t SimulateWallMs(const SimulatorLimits& limits) {
  return std::max<uint32_t>(limits.simulate_timeout_ms, 1000) * 2 + 20000;
}

uint32_t CompileWallMs(const SimulatorLimits& limits) {
  return limits.compile_wall_ms != 0 ? limits.compile_wall_ms
                                     : limits.compile_timeout_ms * 3 + 30000;
}

bool CompileExceededCpu(const sandbox::StepResult& step, const SimulatorLimits& limits) {
  const bool failed = !(step.outcome() == sandbox::StepResult::EXITED && step.exit_code() == 0);
  return failed && step.cpu_ms() + 50 >= limits.compile_timeout_ms;
}

bool EndedByCpuLimit(const sandbox::StepResult& step) {
  return step.outcome() == sandbox::StepResult::CPU_LIMIT ||
         (step.outcome() == sandbox::StepResult::SIGNALED && step.signal() == SIGXCPU);
}

sandbox::StepSpec StepUnderLimits(const SimulatorLimits& l, bool compile) {
  sandbox::StepSpec s;
  if (compile) {
    s.set_timeout_ms(CompileWallMs(l));
    s.set_cpu_limit_ms(std::max<uint32_t>(l.compile_timeout_ms, 1));
    s.set_cpu_seconds(l.compile_timeout_ms / 1000 + 2);
  } else {
    s.set_timeout_ms(SimulateWallMs(l));
    s.set_cpu_limit_ms(std::max<uint32_t>(l.simulate_timeout_ms, 1));
    s.set_cpu_seconds(SimulateCpuSeconds(l));
  }
  s.set_max_output_bytes(l.max_output_bytes);
  s.set_address_space_bytes(compile ? l.compile_address_space : l.simulate_address_space);
  s.set_file_size_bytes(l.file_size_bytes);
  s.set_max_processes(l.max_processes);
  s.set_max_open_files(l.max_open_files);
  return s;
}

sandbox::StepSpec SimulationStep(SimulatorKind kind, const std::string& binary,
                                 const std::string& secret, const SimulatorLimits& limits) {
  sandbox::StepSpec run = StepUnderLimits(limits, false);
  // The simulation finds only its compiled binary: not the sources (testbench, reference).
  run.add_keep_only(kind == SimulatorKind::kIcarus ? binary : "obj/" + binary);
  run.set_separate_stderr(true);
  run.set_hide_proc(true);
  if (kind == SimulatorKind::kIcarus) {
    // -none: no waveform file; nothing reads it and writing it costs time and scratch space.
    for (const std::string& a :
         {std::string("vvp"), std::string("-n"), binary, std::string("-none")})
      run.add_argv(a);
  } else {
    run.add_argv("./obj/" + binary);
  }
  run.add_argv(ResultTagPlusarg(secret));
  return run;
}

namespace {

// The benchmark's `iverilog -Wall -Winfloop -Wno-timescale -g2012 -s <top> -o <binary>
// [+timescale+] design testbench reference`, as its driver runs it: ivlpp, then ivl on its
// output, which runs even after a failed ivlpp (as in the driver's pipe, for its messages). Each
// step has the compile step's limits; CPU time is judged over both (CompilePhase).
void AddIcarusCompileSteps(const HardenedBench& bench, const JobFiles& f, const std::string& nonce,
                           const SimulatorLimits& limits, sandbox::JobRequest* job) {
  const IcarusFiles ivl = IcarusFileNames(nonce);
  auto& files = *job->mutable_files();
  files[ivl.defines] = IcarusDefinesFile();
  files[ivl.sources] = IcarusSourceList({f.design, f.testbench, f.reference});
  files[ivl.config] = IcarusCompileConfig(bench.top, f.binary, bench.default_timescale, ivl);
  auto* preprocess = job->add_steps();
  *preprocess = StepUnderLimits(limits, true);
  for (const std::string& a : IcarusPreprocessArgv(ivl, ivl.preprocessed, false))
    preprocess->add_argv(a);
  auto* compile = job->add_steps();
  *compile = StepUnderLimits(limits, true);
  for (const std::string& a : IcarusCompilerArgv(ivl)) compile->add_argv(a);
  compile->set_stdin_file(ivl.preprocessed);
  compile->set_runs_after_failure(true);
}

}  // namespace

int CompileStepCount(SimulatorKind kind) {
  return kind == SimulatorKind::kIcarus ? 2 : 1;
}

sandbox::StepResult CompilePhase(const sandbox::JobResponse& response, SimulatorKind kind) {
  const int steps = std::min(CompileStepCount(kind), response.steps_size());
  if (steps == 0) return sandbox::StepResult();
  // How it ended is the first failed step's (ivl runs after a failed ivlpp, as at the end of the
  // driver's pipe, for its messages; the compile has failed all the same), else the last's.
  int decisive = -1;
  std::string output;
  uint64_t wall_ms = 0, cpu_ms = 0, rss_kb = 0;
  for (int i = 0; i < steps; ++i) {
    const sandbox::StepResult& step = response.steps(i);
    const bool failed = step.outcome() != sandbox::StepResult::EXITED || step.exit_code() != 0;
    if (failed && decisive < 0) decisive = i;
    output += step.output();
    wall_ms += step.wall_ms();
    cpu_ms += step.cpu_ms();
    rss_kb = std::max<uint64_t>(rss_kb, step.max_rss_kb());
  }
  sandbox::StepResult phase = response.steps(decisive < 0 ? steps - 1 : decisive);
  phase.set_output(std::move(output));
  phase.set_wall_ms(static_cast<uint32_t>(std::min<uint64_t>(wall_ms, UINT32_MAX)));
  phase.set_cpu_ms(cpu_ms);
  phase.set_max_rss_kb(rss_kb);
  return phase;
}

sandbox::JobRequest BuildSimulationJob(SimulatorKind kind, const HardenedBench& bench,
                                       const std::string& design, const std::string& nonce,
                                       const std::string& secret, const SimulatorLimits& limits) {
  sandbox::JobRequest job;
  JobFiles f = JobFileNames(nonce);
  (*job.mutable_files())[f.design] = design;
  (*job.mutable_files())[f.testbench] = bench.testbench;
  (*job.mutable_files())[f.reference] = bench.reference;
  for (const auto& [name, content] : bench.data_files) (*job.mutable_files())[name] = content;
  job.set_stop_on_failure(true);
  if (kind == SimulatorKind::kIcarus) {
    AddIcarusCompileSteps(bench, f, nonce, limits, &job);
  } else {
    auto* compile = job.add_steps();
    *compile = StepUnderLimits(limits, true);
    for (const std::string& a :
         {std::string("verilator"), std::string("--binary"), std::string("--timing"),
          std::string("-Wno-fatal"), std::string("-Wno-lint"), std::string("-Wno-style"),
          std::string("-j"), std::string("1"), std::string("--top-module"), bench.top,
          std::string("-Mdir"), std::string("obj"), std::string("-o"), f.binary})
      compile->add_argv(a);
    if (!bench.default_timescale.empty()) {
      compile->add_argv("--timescale");
      compile->add_argv(bench.default_timescale);
    }
    for (const std::string& file : {f.design, f.testbench, f.reference}) compile->add_argv(file);
  }
  auto* simulate = job.add_steps();
  *simulate = SimulationStep(kind, f.binary, secret, limits);
  // The testbench reads its data files by relative path; the design may read no file at all.
  for (const auto& entry : bench.data_files) simulate->add_keep_only(entry.first);
  return job;
}

sandbox::JobRequest BuildPreprocessJob(SimulatorKind kind, const std::string& design,
                                       const std::string& nonce, const SimulatorLimits& limits) {
  sandbox::JobRequest job;
  JobFiles f = JobFileNames(nonce);
  (*job.mutable_files())[f.design] = design;  // alone: an `include finds nothing of the problem
  auto* step = job.add_steps();
  *step = StepUnderLimits(limits, true);
  step->set_cpu_seconds(kPreprocessCpuSeconds);
  step->set_timeout_ms(kPreprocessWallMs);
  step->set_address_space_bytes(kPreprocessAddressSpace);
  step->set_file_size_bytes(kMaxPreprocessedBytes + 1);
  if (kind == SimulatorKind::kIcarus) {
    // `iverilog -E -g2012 -o <preprocessed> <design>`, without the driver.
    const IcarusFiles ivl = IcarusFileNames(nonce);
    (*job.mutable_files())[ivl.defines] = IcarusDefinesFile();
    (*job.mutable_files())[ivl.sources] = IcarusSourceList({f.design});
    for (const std::string& a : IcarusPreprocessArgv(ivl, f.preprocessed, true)) step->add_argv(a);
  } else {
    // verilator -E writes to stdout, which also carries its messages; the file is clean.
    // -P: no `line markers (they would be backticks left in the text).
    step->add_argv("/bin/sh");
    step->add_argv("-c");
    step->add_argv("exec verilator -E -P " + f.design + " > " + f.preprocessed);
  }
  job.add_collect(f.preprocessed);
  job.set_collect_max_bytes(kMaxPreprocessedBytes);
  return job;
}

sandbox::JobRequest BuildVersionJob(SimulatorKind kind) {
  sandbox::JobRequest job;
  auto* step = job.add_steps();
  *step = StepUnderLimits(SimulatorLimits{}, true);
  step->set_timeout_ms(20000);
  if (kind == SimulatorKind::kIcarus) {
    step->add_argv("iverilog");
    step->add_argv("-V");
  } else {
    step->add_argv("verilator");
    step->add_argv("--version");
  }
  return job;
}

}  // namespace evald
