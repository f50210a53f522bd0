#include "evald/backends/recorded_backend.h"

#include <fmt/format.h>

#include "evald/samples/samples_reader.h"

namespace evald {

StatusOr<std::unique_ptr<RecordedBackend>> RecordedBackend::Open(const std::string& path,
                                                                 std::vector<std::string>* errors) {
  auto file = ReadSamplesJsonl(path);
  if (!file.ok()) return file.status();
  auto backend = std::unique_ptr<RecordedBackend>(new RecordedBackend);
  backend->path_ = path;
  for (const auto& e : file->errors)
    errors->push_back(fmt::format("line {}: {}", e.line(), e.message()));
  std::map<std::string, int> next_index;
  for (const auto& s : file->samples) {
    int index = s.index >= 0 ? s.index : next_index[s.problem];
    next_index[s.problem] = std::max(next_index[s.problem], index + 1);
    if (!backend->completions_.emplace(std::make_pair(s.problem, index), s.text).second)
      errors->push_back(fmt::format("line {}: problem '{}' already has a sample with index {}",
                                    s.line, s.problem, index));
  }
  return backend;
}

void RecordedBackend::Run(const std::vector<SampleRequest>& requests,
                          const std::function<void(size_t, SampleResponse)>& done,
                          const CancelToken& cancel) {
  AnswerInTurn(requests, done, cancel, [&](const SampleRequest& r) {
    SampleResponse resp;
    resp.timing.set_samples(r.n);
    resp.timing.set_attempts(1);
    for (int k = 0; k < r.n; ++k) {
      auto it = completions_.find({r.problem, r.first_index + k});
      if (it == completions_.end()) {
        resp.status = Status::NotFound(fmt::format("{} has no recorded completion for {} index {}",
                                                   path_, r.problem, r.first_index + k));
        resp.samples.clear();
        return resp;
      }
      GeneratedSample s;
      s.text = it->second;
      s.finish_reason = "recorded";
      resp.samples.push_back(std::move(s));
    }
    return resp;
  });
}

}  // namespace evald
