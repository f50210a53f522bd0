#include "evald/runs/sample_plan.h"

#include <map>
#include <set>

#include "base/hash.h"
#include "datasets/code_extractor.h"

namespace evald {

namespace {

v1::InputError LineError(int line, std::string message) {
  v1::InputError e;
  e.set_line(line);
  e.set_message(std::move(message));
  return e;
}

}  // namespace

SamplePlan PlanUploadedSamples(const Dataset& dataset, const SamplesFile& file) {
  SamplePlan plan;
  std::map<std::string, int> next_index;
  std::set<std::pair<std::string, int>> seen;
  for (const SampleRecord& s : file.samples) {
    const Problem* problem = dataset.Find(s.problem);
    if (!problem) {
      // The dataset is named, not its folder: the daemon's paths are not the client's business.
      plan.errors.push_back(LineError(s.line, "unknown problem '" + s.problem + "' (not in the " +
                                                  std::string(TaskName(dataset.task())) +
                                                  " dataset)"));
      continue;
    }
    int& next = next_index[s.problem];
    const int index = s.index >= 0 ? s.index : next;
    if (!seen.insert({s.problem, index}).second) {
      plan.errors.push_back(LineError(
          s.line,
          "problem '" + s.problem + "' already has a sample with index " + std::to_string(index)));
      continue;
    }
    next = std::max(next, index + 1);
    plan.samples.push_back({problem, index, &s});
  }
  return plan;
}

std::string ExtractCompletion(Task task, const Problem& problem, const std::string& completion,
                              v1::SampleResult* result) {
  auto* ext = result->mutable_extraction();
  ExtractedCode code = ExtractCode(task, completion, problem.interface);
  ext->set_method(code.method);
  ext->set_interface_prepended(code.interface_prepended);
  ext->clear_notes();
  for (auto& n : code.notes) ext->add_notes(n);
  result->set_code_sha256(Sha256Hex(code.code));
  return std::move(code.code);
}

std::string ExtractSample(Task task, const Problem& problem, const SampleRecord& record, int index,
                          v1::SampleResult* result) {
  result->set_problem(problem.name);
  result->set_index(index);
  result->set_line(record.line);
  if (!record.has_code) return ExtractCompletion(task, problem, record.text, result);
  result->mutable_extraction()->set_method("given");
  result->set_code_sha256(Sha256Hex(record.text));
  return record.text;
}

}  // namespace evald
