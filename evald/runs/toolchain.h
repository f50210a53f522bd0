// The tools a grading session grades with: each simulator's kind, version and limits, and
// Yosys's version when cross-checks are on. A version is what the tool in the sandbox prints
// for its version query; it is part of every verdict key. It is kept in the store by the
// identity of the tool's files on the host (path, inode, size, modification time) and asked
// again only when they change, so a run that every cache answers starts no sandbox.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "harness/simulator.h"
#include "sandbox/sandbox_pool.h"

namespace evald {

class Store;

struct SimulatorTool {
  SimulatorKind kind = SimulatorKind::kIcarus;
  std::string version;
  SimulatorLimits base;        // calibration runs the reference to its end under these
  SimulatorLimits key_limits;  // samples: with the fixed timeout and early stop; keys use these
  std::optional<uint32_t> fixed_timeout_ms;  // else each problem's limit comes from calibration
};

class Toolchain {
 public:
  Toolchain(SandboxPool& pool, Store* store) : pool_(pool), store_(store) {}

  // Adds a simulator (its version from the store or asked in the sandbox); Unavailable when it
  // does not run there, or is Verilator in a sandbox that cannot contain it.
  Status AddSimulator(SimulatorKind kind, std::optional<uint32_t> fixed_timeout_ms,
                      bool exact_mismatch_counts);
  // Yosys's version, "" when it does not run in the sandbox.
  std::string YosysVersion();

  const std::vector<SimulatorTool>& simulators() const { return simulators_; }
  const SimulatorTool& simulator(size_t i) const { return simulators_[i]; }
  // "iverilog VERSION", or with several "iverilog ...; verilator ...".
  std::string Describe() const;

 private:
  // The first line of a version query, from the store when the tool's files are unchanged.
  std::string Version(const std::vector<std::string>& files, const sandbox::JobRequest& query);

  SandboxPool& pool_;
  Store* store_;
  std::vector<SimulatorTool> simulators_;
};

}  // namespace evald
