// A verilog-eval style problem set: a `dataset_<task>` folder with, per problem,
// NAME_prompt.txt, NAME_ref.sv (module RefModule), NAME_test.sv (module tb) and, for
// code completion, NAME_ifc.txt. The in-context examples (icl/ or scripts/) and prompts.json
// are looked up beside the folder, as they sit in a benchmark checkout. The VerilogEval v1
// tasks read a v1 checkout instead (data/ and descriptions/), each problem given the same shape
// (verilog_eval_v1.h). The RTLLM task reads an RTLLM checkout (rtllm.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "datasets/benchmark_prompts.pb.h"
#include "datasets/grading_setup.h"
#include "datasets/task.h"

namespace evald {

struct Problem {
  std::string name;
  std::string prompt;     // NAME_prompt.txt (v1: the description, then the header to complete)
  std::string reference;  // NAME_ref.sv
  std::string testbench;  // NAME_test.sv
  std::string interface;  // NAME_ifc.txt (code completion; empty for spec-to-rtl if absent)
  // The input constraints its text states, as Verilog expressions over the reference's input
  // ports (datasets/input_assumptions.h); formal checks assume them.
  std::vector<std::string> assumptions;
  // How its testbench grades a design (verilog-eval's way unless the benchmark says otherwise).
  GradingSetup setup;
};

class Dataset {
 public:
  // `path` is a benchmark checkout (holding dataset_<task>/) or a dataset_* folder itself; for
  // the VerilogEval v1 tasks, a v1 checkout.
  static StatusOr<Dataset> Load(const std::string& path, Task task);

  Task task() const { return task_; }
  const std::string& folder() const { return folder_; }
  const std::vector<Problem>& problems() const { return problems_; }
  const Problem* Find(std::string_view name) const;

  // The benchmark's prompt strings (prompts.json beside the folder, else the built-in copy).
  const datasets::BenchmarkPrompts& prompts() const { return prompts_; }
  bool prompts_from_file() const { return prompts_from_file_; }

  // The in-context-learning prefix for 1..4 shots.
  StatusOr<std::string> IclPrefix(int shots) const;

  // A digest of every problem's name, prompt, reference, testbench and interface, in order: two
  // sets alike by name but not in content have different digests (the benchmark and its version
  // are the task's: BenchmarkName, BenchmarkVersion).
  const std::string& problems_digest() const { return problems_digest_; }

 private:
  Task task_ = Task::kSpecToRtl;
  std::string folder_;
  std::vector<std::string> icl_dirs_;
  std::vector<Problem> problems_;
  std::map<std::string, size_t, std::less<>> index_;
  datasets::BenchmarkPrompts prompts_;
  bool prompts_from_file_ = false;
  std::string problems_digest_;

  Status Add(Problem problem);  // refused when its name is taken
  void ComputeProblemsDigest();

  static StatusOr<Dataset> LoadVerilogEvalV1(const std::string& path, Task task);
  static StatusOr<Dataset> LoadRtllm(const std::string& path);
};

// The task `name` says, or, when it is empty, the first task of `benchmark` (when given), else
// the one the layout at `path` says: a VerilogEval v1 checkout is verilog-eval-v1-human, an
// RTLLM checkout rtllm2, anything else spec-to-rtl. A task of another benchmark than
// `benchmark` is refused; loading then refuses a checkout of another layout.
StatusOr<Task> TaskForDataset(const std::string& path, std::string_view name,
                              std::string_view benchmark = "");

// Problem names become file names in the sandbox and keys in reports: keep them plain.
bool IsValidProblemName(std::string_view name);

}  // namespace evald
