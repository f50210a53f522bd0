#include "datasets/verilog_eval_v1.h"

#include <google/protobuf/util/json_util.h>

#include <filesystem>
#include <map>

#include "base/file_io.h"
#include "base/py_text.h"
#include "base/text_escape.h"
#include "base/verilog_identifier.h"
#include "datasets/verilog_eval_v1.pb.h"

namespace evald {

namespace {

constexpr size_t kMaxFileBytes = 64u << 20;
constexpr size_t kMaxProblems = 100000;

constexpr std::string_view kReferenceHeader = "module reference_module";

// The one `module reference_module ... endmodule` of the test: [begin, end) in the text.
StatusOr<std::pair<size_t, size_t>> ReferenceModuleSpan(const std::string& test) {
  const size_t begin = test.find(kReferenceHeader);
  if (begin == std::string::npos) return Status::Corruption("its test holds no reference_module");
  if (test.find(kReferenceHeader, begin + 1) != std::string::npos)
    return Status::Corruption("its test holds reference_module twice");
  const std::string_view kEnd = "endmodule";
  const size_t end = test.find(kEnd, begin);
  if (end == std::string::npos) return Status::Corruption("its reference_module has no endmodule");
  return std::make_pair(begin, end + kEnd.size());
}

// `text` with the identifier `from` renamed `to`, which must occur exactly once.
StatusOr<std::string> RenameTheOne(const std::string& text, const std::string& from,
                                   const std::string& to, const std::string& where) {
  int n = 0;
  std::string renamed = RenameIdentifier(text, from, to, &n);
  if (n != 1)
    return Status::Corruption(where + " names " + from + " " + std::to_string(n) +
                              " times (expected once)");
  return renamed;
}

template <typename Message>
StatusOr<std::vector<Message>> ReadJsonLines(const std::string& path) {
  auto text = ReadFileBounded(path, kMaxFileBytes);
  if (!text.ok()) return text.status();
  std::vector<Message> out;
  int line_number = 0;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  for (auto line : py::SplitLines(*text)) {
    ++line_number;
    if (py::Strip(line).empty()) continue;
    if (out.size() == kMaxProblems) return Status::InvalidArgument(path + ": too many lines");
    Message m;
    auto st = google::protobuf::util::JsonStringToMessage(std::string(line), &m, options);
    if (!st.ok())
      return Status::Corruption(path + " line " + std::to_string(line_number) + ": " +
                                std::string(st.message()));
    out.push_back(std::move(m));
  }
  return out;
}

// The problem set's file names under a checkout root: "Human" or "Machine".
std::string VerilogEvalV1Set(Task task) {
  return task == Task::kVerilogEvalV1Machine ? "Machine" : "Human";
}

}  // namespace

bool IsVerilogEvalV1Checkout(const std::string& path) {
  return IsRegularFile(path + "/data/VerilogEval_Human.jsonl") ||
         (IsRegularFile(path) && py::EndsWith(path, ".jsonl"));
}

StatusOr<Problem> ConvertVerilogEvalV1Problem(const std::string& task_id, const std::string& prompt,
                                              const std::string& test,
                                              const std::string& description) {
  if (!IsValidProblemName(task_id))
    return Status::Corruption("invalid task_id '" + EscapeControl(task_id) + "'");
  auto span = ReferenceModuleSpan(test);
  if (!span.ok()) return span.status().Annotate("problem " + task_id);
  const auto [begin, end] = *span;
  const size_t body = begin + kReferenceHeader.size();
  auto bench = RenameTheOne(test.substr(0, begin) + test.substr(end), "reference_module",
                            "RefModule", "its testbench");
  if (bench.ok()) bench = RenameTheOne(*bench, "top_module", "TopModule", "its testbench");
  auto interface =
      RenameTheOne(py::TranslateNewlines(prompt), "top_module", "TopModule", "its prompt");
  for (const Status& st : {bench.status(), interface.status()})
    if (!st.ok()) return st.Annotate("problem " + task_id);
  Problem p;
  p.name = task_id;
  p.reference = "module RefModule" + test.substr(body, end - body) + "\n";
  p.testbench = std::move(*bench);
  p.interface = std::move(*interface);
  // What a model is shown: the description, then the header to complete (upstream's prompt).
  p.prompt = std::string(py::Strip(py::TranslateNewlines(description))) + "\n\n" +
             py::TranslateNewlines(prompt);
  return p;
}

StatusOr<std::vector<Problem>> LoadVerilogEvalV1(const std::string& path, Task task) {
  const std::string set = VerilogEvalV1Set(task);
  const std::string in_descriptions = "/descriptions/VerilogDescription_" + set + ".jsonl";
  std::string data = path + "/data/VerilogEval_" + set + ".jsonl";
  std::string root = path;
  if (IsRegularFile(path)) {  // a problem file (data/example/ExampleEval.jsonl) in a checkout
    data = path;
    root = std::filesystem::path(path).parent_path().string();
    while (!root.empty() && root != "/" && !IsRegularFile(root + in_descriptions))
      root = std::filesystem::path(root).parent_path().string();
  }
  const std::string descriptions = root + in_descriptions;
  auto problems = ReadJsonLines<datasets::VerilogEvalV1Problem>(data);
  if (!problems.ok()) return problems.status();
  auto described = ReadJsonLines<datasets::VerilogEvalV1Description>(descriptions);
  if (!described.ok()) return described.status();
  std::map<std::string, std::string> description_of;
  for (auto& d : *described) description_of[d.task_id()] = d.detail_description();
  std::vector<Problem> out;
  for (const auto& raw : *problems) {
    auto it = description_of.find(raw.task_id());
    if (it == description_of.end())
      return Status::Corruption(descriptions + ": no description of problem " +
                                EscapeControl(raw.task_id()));
    auto p = ConvertVerilogEvalV1Problem(raw.task_id(), raw.prompt(), raw.test(), it->second);
    if (!p.ok()) return p.status().Annotate(data);
    out.push_back(std::move(*p));
  }
  if (out.empty()) return Status::NotFound(data + " holds no problems");
  return out;
}

}  // namespace evald
