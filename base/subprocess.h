// Runs a program with arguments (no shell) and collects what it prints, with a deadline and a cap
// on the output kept. For the cluster tools evald drives (sbatch, squeue, scancel): their
// arguments are never parsed by a shell, so no name in them can become a command.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"

namespace evald {

struct ProcessOptions {
  // The process and everything it started (its own process group) are killed (SIGKILL) after
  // this; what is left in the group when it exits is killed then.
  std::chrono::milliseconds timeout{30000};
  size_t max_output_bytes = 4u << 20;  // stdout and stderr together; the rest is dropped
};

struct ProcessResult {
  int exit_code = -1;  // -1: killed by a signal (or by the timeout)
  bool timed_out = false;
  std::string output;  // stdout followed by stderr interleaved as they came
};

// argv[0] is looked up in PATH. An error only when the program could not be started.
StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                   const ProcessOptions& options = {});

// "sbatch: error: ..." → the first line of a tool's output, for error messages.
std::string FirstLine(const std::string& text);

}  // namespace evald
