// The two simulators and the sandbox job that compiles and runs a design against a testbench.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "harness/testbench_hardening.h"
#include "sandbox/sandbox_protocol.pb.h"

namespace evald {

enum class SimulatorKind { kIcarus, kVerilator };

StatusOr<SimulatorKind> ParseSimulator(std::string_view name);  // "iverilog" | "verilator"
std::string_view SimulatorName(SimulatorKind kind);

struct SimulatorLimits {
  // Compiling is limited by CPU time too (each of the compiler's processes, RLIMIT_CPU, and the
  // step's total, CompileExceededCpu); the wall clock is a backstop (CompileWallMs), so that a
  // design whose elaboration never ends (a generate loop counting the wrong way) ends the same
  // way on a quiet and on a loaded machine.
  uint32_t compile_timeout_ms = 30000;
  // The compile step's wall-clock backstop; 0: three times its CPU-time limit plus 30 s. (Not
  // part of a verdict's key: what the backstop ends is never a verdict, grader.h.)
  uint32_t compile_wall_ms = 0;
  // The simulation's limit is CPU time, so that a verdict does not depend on what else runs:
  // the benchmark's own 30 s, narrowed per problem from the reference's CPU time. The wall
  // clock is only a backstop for a step that waits without computing (SimulateWallMs).
  uint32_t simulate_timeout_ms = 30000;
  uint64_t compile_address_space = 4ull << 30;
  uint64_t simulate_address_space = 2ull << 30;  // one real completion grew vvp to 8.7 GB
  uint64_t max_output_bytes = 1u << 20;
  uint64_t file_size_bytes = 64u << 20;
  uint32_t max_processes = 64;
  uint32_t max_open_files = 256;
  // The testbench ends the simulation at its first mismatching sample (its result line then
  // reads "Mismatches: 1 in K samples"): pass/fail cannot change - a pass has no mismatch to
  // stop at - while a wrong design no longer runs to the end. The count becomes a lower bound.
  bool stop_at_first_mismatch = false;
};

SimulatorLimits DefaultLimits(SimulatorKind kind);

// The simulation's CPU-time limit, simulate_timeout_ms to the millisecond (the process's CPU
// clock, StepSpec.cpu_limit_ms); RLIMIT_CPU's backstop in whole seconds a second above it; and the
// wall-clock backstop: twice the limit plus 20 s of wall time less the step's waits for a CPU
// (StepSpec.timeout_ms; its plain wall time's ceiling is four times that, max_wall_ms unset).
uint32_t SimulateCpuSeconds(const SimulatorLimits& limits);
uint32_t SimulateWallMs(const SimulatorLimits& limits);
// The compile step's wall-clock backstop (also less its waits for a CPU): compile_wall_ms, or
// three times its CPU-time limit plus 30 s.
uint32_t CompileWallMs(const SimulatorLimits& limits);
// A compile phase (CompilePhase) that failed having used its CPU time: a compiler's process was
// ended by its limit (Verilator's make reports a child's SIGXCPU as a plain failure).
bool CompileExceededCpu(const sandbox::StepResult& step, const SimulatorLimits& limits);
// The sandbox ended the step at its CPU-time limit: StepSpec.cpu_limit_ms (CPU_LIMIT) or
// RLIMIT_CPU, its whole-second backstop (SIGXCPU).
bool EndedByCpuLimit(const sandbox::StepResult& step);

// A sandbox step under these limits: a compile step (its timeout and address space) or a
// simulation step (the CPU-time limit and its wall-clock backstop).
sandbox::StepSpec StepUnderLimits(const SimulatorLimits& limits, bool compile);

// Names of the files inside the scratch directory.
struct JobFiles {
  std::string design, testbench, reference, binary, preprocessed;
};
JobFiles JobFileNames(const std::string& nonce);

// The first CompileStepCount steps compile (the design first, as the benchmark does, then the
// testbench and the reference: Icarus's ivlpp then ivl, harness/icarus_invocation.h, or
// Verilator), the last simulates (stop on failure) with nothing but the binary and the
// testbench's data files beside it, without /proc, its standard error apart, and the result
// tag's secret on its command line. A bench's default timescale is Icarus's +timescale+ (in its
// configuration, as the driver's command file puts it) and Verilator's --timescale.
sandbox::JobRequest BuildSimulationJob(SimulatorKind kind, const HardenedBench& bench,
                                       const std::string& design, const std::string& nonce,
                                       const std::string& secret, const SimulatorLimits& limits);

// How many of a simulation job's steps compile, and their results read as one compile step: its
// output, the CPU and wall time summed, how the first that failed ended (else the last).
int CompileStepCount(SimulatorKind kind);
sandbox::StepResult CompilePhase(const sandbox::JobResponse& response, SimulatorKind kind);

// The simulation step of a compiled binary (`binary`, in the scratch directory) under these
// limits: what BuildSimulationJob and the counterexample replay run.
sandbox::StepSpec SimulationStep(SimulatorKind kind, const std::string& binary,
                                 const std::string& secret, const SimulatorLimits& limits);

// The largest preprocessed design accepted (macro expansion can multiply a small file).
inline constexpr uint64_t kMaxPreprocessedBytes = 2u << 20;

// Preprocessing a real design takes milliseconds on a quiet machine; a macro that expands
// itself forever spins until its CPU-time limit, and the wall clock is only the backstop for a
// step that waits. The limit is the simulation limit's floor: a loaded machine (the ASan CI
// job) was seen to charge a plain design 2.12 s of CPU (10.4 s of wall time) for `iverilog -E`,
// and a limit a real design can reach makes its letter depend on the load.
inline constexpr uint32_t kPreprocessCpuSeconds = 5;
inline constexpr uint32_t kPreprocessWallMs = 30000;

// A macro that expands itself grows the preprocessor's buffers without end. Under the compile
// step's 4 GiB (the worker's whole cgroup) the race to the first limit depended on the machine:
// Icarus's ivlpp ran out of address space after about 3 s of CPU when quiet (L), reached the
// 5 s CPU limit when loaded (T), or was killed by memory pressure with only the driver's
// "errors preprocessing" to show (C). A real design's preprocessing needs under 100 MB (a 13 MB
// design: ivlpp 2 MB resident, verilator -E 62 MB), so 512 MiB of address space ends such a
// macro at about 0.4 s of CPU, by ivlpp's own "ran out of memory", on any machine.
inline constexpr uint64_t kPreprocessAddressSpace = 512ull << 20;

// A job that runs the simulator's own preprocessor over the design alone and returns its output
// (collected file JobFiles::preprocessed). What is checked and then compiled is that output, so
// no macro can hide a construct from the check or carry into the testbench compiled after it.
sandbox::JobRequest BuildPreprocessJob(SimulatorKind kind, const std::string& design,
                                       const std::string& nonce, const SimulatorLimits& limits);

// A job that prints the simulator's version.
sandbox::JobRequest BuildVersionJob(SimulatorKind kind);

}  // namespace evald
