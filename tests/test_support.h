// Shared helpers for the tests: paths and small builders.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "base/file_io.h"
#include "base/hash.h"

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

// The npm packages of the reference scripts (node-llama-cpp, @huggingface/jinja), installed by
// scripts/install-deps.sh.
inline std::string NodeReferenceDir() {
  return SourceDir() + "/.cache/node-llama-cpp";
}
inline bool HaveNodeReference() {
  return IsDirectory(NodeReferenceDir() + "/node_modules/node-llama-cpp");
}

// Runs tests/reference/SCRIPT with node and `args` (already quoted for the shell); its standard
// output. ES modules resolve packages from the script's own directory upwards (NODE_PATH does
// not apply), so a copy named for this process (CTest runs tests side by side) is placed beside
// the installed packages and removed afterwards.
inline ShellResult RunNodeReference(const std::string& script, const std::string& args) {
  const std::string dir = NodeReferenceDir();
  const std::string copy = std::to_string(::getpid()) + "." + script;
  return RunShell("cp " + SourceDir() + "/tests/reference/" + script + " " + dir + "/" + copy +
                  " && cd " + dir + " && node " + copy + " " + args +
                  " 2>/dev/null; rc=$?; rm -f " + dir + "/" + copy + "; exit $rc");
}

// A folder of its own under /tmp for one test, removed with everything in it when the test ends.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) : path_("/tmp/evald-" + tag + "-" + RandomHex(6)) {
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `text` in single quotes for /bin/sh.
inline std::string ShellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace evald::testing
