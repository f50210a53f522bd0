#include "datasets/dataset.h"

#include <algorithm>
#include <filesystem>

#include "base/file_io.h"
#include "base/hash.h"
#include "base/py_text.h"
#include "base/text_escape.h"
#include "datasets/benchmark_strings.h"
#include "datasets/input_assumptions.h"
#include "datasets/rtllm.h"
#include "datasets/verilog_eval_v1.h"

namespace evald {

namespace fs = std::filesystem;

namespace {
constexpr size_t kMaxProblemFileBytes = 4u << 20;
constexpr size_t kMaxProblems = 100000;

std::string Parent(const std::string& p) {
  return fs::path(p).parent_path().string();
}

// A file the benchmark's scripts read in Python's text mode (prompts, interfaces, examples).
StatusOr<std::string> ReadTextFile(const std::string& path) {
  auto raw = ReadFileBounded(path, kMaxProblemFileBytes);
  if (!raw.ok()) return raw.status();
  return py::TranslateNewlines(*raw);
}
}  // namespace

bool IsValidProblemName(std::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

namespace {

// Problem names: problems.txt when present, else every NAME_prompt.txt.
StatusOr<std::vector<std::string>> ProblemNames(const std::string& folder) {
  std::vector<std::string> names;
  std::string list_path = folder + "/problems.txt";
  if (IsRegularFile(list_path)) {
    auto text = ReadFileBounded(list_path, kMaxProblemFileBytes);
    if (!text.ok()) return text.status();
    for (auto line : py::SplitLines(*text)) {
      auto name = py::Strip(line);
      if (name.empty() || name[0] == '#') continue;
      if (!IsValidProblemName(name))
        return Status::Corruption(list_path + ": invalid problem name '" + EscapeControl(name) +
                                  "'");
      names.emplace_back(name);
    }
  } else {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      std::string file = entry.path().filename().string();
      if (py::EndsWith(file, "_prompt.txt")) {
        std::string name = file.substr(0, file.size() - 11);
        if (IsValidProblemName(name)) names.push_back(name);
      }
    }
    std::sort(names.begin(), names.end());
  }
  if (names.empty())
    return Status::NotFound(folder + " holds no problems (no problems.txt, no *_prompt.txt)");
  if (names.size() > kMaxProblems) return Status::InvalidArgument("too many problems");
  return names;
}

// NAME_prompt.txt, _ref.sv, _test.sv and (code completion) _ifc.txt.
StatusOr<Problem> LoadProblem(const std::string& folder, const std::string& name, Task task) {
  Problem p;
  p.name = name;
  std::string base = folder + "/" + name;
  auto prompt = ReadTextFile(base + "_prompt.txt");
  auto ref = ReadFileBounded(base + "_ref.sv", kMaxProblemFileBytes);
  auto test = ReadFileBounded(base + "_test.sv", kMaxProblemFileBytes);
  if (!prompt.ok()) return prompt.status().Annotate("problem " + name);
  if (!ref.ok()) return ref.status().Annotate("problem " + name);
  if (!test.ok()) return test.status().Annotate("problem " + name);
  p.prompt = std::move(*prompt);
  p.reference = std::move(*ref);
  p.testbench = std::move(*test);
  if (IsRegularFile(base + "_ifc.txt")) {
    auto ifc = ReadTextFile(base + "_ifc.txt");
    if (!ifc.ok()) return ifc.status().Annotate("problem " + name);
    p.interface = std::move(*ifc);
  } else if (task == Task::kCodeComplete) {
    return Status::NotFound("problem " + name + ": code completion needs " + name + "_ifc.txt");
  }
  return p;
}

}  // namespace

namespace {

// verilog-eval v2's reviewed assumptions, for the same problem under its v1 name (v2's
// ProbNNN_name is v1's name); each still holds only where the v1 text quotes its sentence.
datasets::InputAssumptions UnderVerilogEvalV1Names(const datasets::InputAssumptions& v2) {
  datasets::InputAssumptions v1 = v2;
  for (auto& entry : *v1.mutable_entries()) {
    const std::string& name = entry.problem();
    const size_t underscore = name.find('_');
    if (py::StartsWith(name, "Prob") && underscore != std::string::npos)
      entry.set_problem(name.substr(underscore + 1));
  }
  return v1;
}

}  // namespace

StatusOr<Dataset> Dataset::LoadVerilogEvalV1(const std::string& path, Task task) {
  Dataset ds;
  ds.task_ = task;
  if (!IsVerilogEvalV1Checkout(path))
    return Status::NotFound(path +
                            " is not a VerilogEval v1 checkout (no data/VerilogEval_Human.jsonl)");
  std::error_code ec;
  ds.folder_ = fs::canonical(path, ec).string();
  if (ec) return Status::IoError("cannot resolve " + path + ": " + ec.message());
  auto problems = evald::LoadVerilogEvalV1(ds.folder_, task);
  if (!problems.ok()) return problems.status();
  for (auto& p : *problems) EVALD_RETURN_IF_ERROR(ds.Add(std::move(p)));
  ApplyInputAssumptions(UnderVerilogEvalV1Names(VerilogEvalAssumptions()), &ds.problems_);
  ds.prompts_ = BuiltinBenchmarkPrompts();
  ds.ComputeProblemsDigest();
  return ds;
}

StatusOr<Dataset> Dataset::LoadRtllm(const std::string& path) {
  Dataset ds;
  ds.task_ = Task::kRtllm2;
  if (!IsRtllmCheckout(path))
    return Status::NotFound(path + " is not an RTLLM checkout (no auto_run.py and File_list.md)");
  std::error_code ec;
  ds.folder_ = fs::canonical(path, ec).string();
  if (ec) return Status::IoError("cannot resolve " + path + ": " + ec.message());
  auto problems = evald::LoadRtllm(ds.folder_);
  if (!problems.ok()) return problems.status();
  for (auto& p : *problems) EVALD_RETURN_IF_ERROR(ds.Add(std::move(p)));
  ds.prompts_ = BuiltinBenchmarkPrompts();
  ds.ComputeProblemsDigest();
  return ds;
}

StatusOr<Task> TaskForDataset(const std::string& path, std::string_view name,
                              std::string_view benchmark) {
  if (!benchmark.empty()) {
    auto first = FirstTaskOf(benchmark);
    if (!first.ok()) return first.status();
    if (name.empty()) return *first;
  }
  if (!name.empty()) {
    auto task = ParseTask(name);
    if (task.ok() && !benchmark.empty() && BenchmarkName(*task) != benchmark)
      return Status::InvalidArgument("task " + std::string(name) + " belongs to " +
                                     std::string(BenchmarkName(*task)) + ", not " +
                                     std::string(benchmark));
    return task;
  }
  if (IsRtllmCheckout(path)) return Task::kRtllm2;
  return IsVerilogEvalV1Checkout(path) ? Task::kVerilogEvalV1Human : Task::kSpecToRtl;
}

StatusOr<Dataset> Dataset::Load(const std::string& path, Task task) {
  if (IsVerilogEvalV1(task)) return LoadVerilogEvalV1(path, task);
  if (task == Task::kRtllm2) return LoadRtllm(path);
  if (IsVerilogEvalV1Checkout(path))
    return Status::InvalidArgument(path +
                                   " is a VerilogEval v1 checkout: its tasks are "
                                   "verilog-eval-v1-human and verilog-eval-v1-machine");
  if (IsRtllmCheckout(path))
    return Status::InvalidArgument(path + " is an RTLLM checkout: its task is rtllm2");
  Dataset ds;
  ds.task_ = task;
  std::string sub = (fs::path(path) / ("dataset_" + std::string(TaskName(task)))).string();
  if (IsDirectory(sub)) {
    ds.folder_ = sub;
  } else if (IsDirectory(path)) {
    ds.folder_ = path;
  } else {
    return Status::NotFound("dataset folder " + path + " does not exist");
  }
  std::error_code ec;
  ds.folder_ = fs::canonical(ds.folder_, ec).string();
  if (ec) return Status::IoError("cannot resolve " + path + ": " + ec.message());
  auto names = ProblemNames(ds.folder_);
  if (!names.ok()) return names.status();
  for (const auto& name : *names) {
    auto p = LoadProblem(ds.folder_, name, task);
    if (!p.ok()) return p.status();
    EVALD_RETURN_IF_ERROR(ds.Add(std::move(*p)));
  }
  ApplyInputAssumptions(VerilogEvalAssumptions(), &ds.problems_);
  // Benchmark checkout layout: icl/ (this data) or scripts/ (upstream) beside the folder.
  std::string root = Parent(ds.folder_);
  ds.icl_dirs_ = {root + "/icl", root + "/scripts", ds.folder_ + "/icl"};
  ds.prompts_ = BuiltinBenchmarkPrompts();
  for (const std::string& candidate : {root + "/prompts.json", ds.folder_ + "/prompts.json"}) {
    if (!IsRegularFile(candidate)) continue;
    auto text = ReadFileBounded(candidate, kMaxProblemFileBytes);
    if (!text.ok()) return text.status();
    auto parsed = ParseBenchmarkPrompts(*text);
    if (!parsed.ok()) return parsed.status().Annotate(candidate);
    ds.prompts_ = std::move(*parsed);
    ds.prompts_from_file_ = true;
    break;
  }
  ds.ComputeProblemsDigest();
  return ds;
}

Status Dataset::Add(Problem problem) {
  if (index_.count(problem.name))
    return Status::Corruption("problem " + problem.name + " is listed twice");
  index_[problem.name] = problems_.size();
  problems_.push_back(std::move(problem));
  return Status::Ok();
}

void Dataset::ComputeProblemsDigest() {
  std::vector<std::string> digests;
  for (const auto& p : problems_) {
    // The setup's signature is empty for verilog-eval's: those digests stay what they were.
    const std::string setup = GradingSetupSignature(p.setup);
    digests.push_back(
        setup.empty()
            ? Sha256OfFields({p.name, p.prompt, p.reference, p.testbench, p.interface})
            : Sha256OfFields({p.name, p.prompt, p.reference, p.testbench, p.interface, setup}));
  }
  problems_digest_ = Sha256OfFields(std::vector<std::string_view>(digests.begin(), digests.end()));
}

const Problem* Dataset::Find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &problems_[it->second];
}

StatusOr<std::string> Dataset::IclPrefix(int shots) const {
  if (shots < 1 || shots > 4) return Status::InvalidArgument("shots must be between 0 and 4");
  if (IsVerilogEvalV1(task_))
    return Status::InvalidArgument("VerilogEval v1 has no in-context examples (shots must be 0)");
  std::string file = "verilog-example-prefix_" + std::string(TaskName(task_)) + "_" +
                     std::to_string(shots) + "-shot.txt";
  for (const auto& dir : icl_dirs_) {
    if (IsRegularFile(dir + "/" + file)) return ReadTextFile(dir + "/" + file);
  }
  return Status::NotFound("in-context examples " + file + " not found beside " + folder_ +
                          " (looked in icl/ and scripts/)");
}

}  // namespace evald
