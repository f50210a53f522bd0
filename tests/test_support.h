// Shared helpers for the tests: paths and small builders.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "base/file_io.h"

namespace evald::testing {

inline std::string SourceDir() {
  return EVALD_SOURCE_DIR;
}
inline std::string SharedVerilogEval() {
  return std::string(EVALD_SHARED_DIR) + "/verilog-eval";
}
inline bool HaveSharedVerilogEval() {
  return IsDirectory(SharedVerilogEval() + "/dataset_spec-to-rtl");
}
inline std::string BuiltinDataset() {
  return SourceDir() + "/datasets/builtin";
}

struct ShellResult {
  int exit_code = -1;  // -1: did not start or ended by a signal
  std::string output;  // what the command wrote to its standard output
};

// Runs `command` through /bin/sh and collects its standard output (append " 2>&1" for stderr).
inline ShellResult RunShell(const std::string& command) {
  ShellResult r;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace evald::testing
