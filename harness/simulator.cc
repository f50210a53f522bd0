#include "harness/simulator.h"

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
          "sim_" + nonce};
}

namespace {
sandbox::StepSpec Step(const SimulatorLimits& l, bool compile) {
  sandbox::StepSpec s;
  uint32_t timeout = compile ? l.compile_timeout_ms : l.simulate_timeout_ms;
  s.set_timeout_ms(timeout);
  s.set_cpu_seconds(timeout / 1000 + 2);
  s.set_max_output_bytes(l.max_output_bytes);
  s.set_address_space_bytes(compile ? l.compile_address_space : l.simulate_address_space);
  s.set_file_size_bytes(l.file_size_bytes);
  s.set_max_processes(l.max_processes);
  s.set_max_open_files(l.max_open_files);
  return s;
}
}  // namespace

sandbox::JobRequest BuildSimulationJob(SimulatorKind kind, const HardenedBench& bench,
                                       const std::string& design, const std::string& nonce,
                                       const SimulatorLimits& limits) {
  sandbox::JobRequest job;
  JobFiles f = JobFileNames(nonce);
  (*job.mutable_files())[f.design] = design;
  (*job.mutable_files())[f.testbench] = bench.testbench;
  (*job.mutable_files())[f.reference] = bench.reference;
  job.set_stop_on_failure(true);
  auto* compile = job.add_steps();
  *compile = Step(limits, true);
  auto* run = job.add_steps();
  *run = Step(limits, false);
  if (kind == SimulatorKind::kIcarus) {
    // The benchmark's command line, with the renamed top.
    for (const std::string& a :
         {std::string("iverilog"), std::string("-Wall"), std::string("-Winfloop"),
          std::string("-Wno-timescale"), std::string("-g2012"), std::string("-s"), bench.top,
          std::string("-o"), f.binary, f.design, f.testbench, f.reference})
      compile->add_argv(a);
    // -none: no waveform file; nothing reads it and writing it costs time and scratch space.
    for (const std::string& a :
         {std::string("vvp"), std::string("-n"), f.binary, std::string("-none")})
      run->add_argv(a);
  } else {
    for (const std::string& a :
         {std::string("verilator"), std::string("--binary"), std::string("--timing"),
          std::string("-Wno-fatal"), std::string("-Wno-lint"), std::string("-Wno-style"),
          std::string("-j"), std::string("1"), std::string("--top-module"), bench.top,
          std::string("-Mdir"), std::string("obj"), std::string("-o"), f.binary, f.design,
          f.testbench, f.reference})
      compile->add_argv(a);
    run->add_argv("./obj/" + f.binary);
  }
  return job;
}

sandbox::JobRequest BuildVersionJob(SimulatorKind kind) {
  sandbox::JobRequest job;
  auto* step = job.add_steps();
  *step = Step(SimulatorLimits{}, true);
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
