// The read side of the run manager: checkpoints, runs, samples and reports as stored.
#include <fmt/format.h>

#include "evald/runs/scoring.h"
#include "evald/server/run_manager.h"

namespace evald {

bool ValidPageToken(std::string_view token) {
  size_t slash = token.rfind('/');
  if (slash == std::string_view::npos || token.size() - slash - 1 != 8) return false;
  std::string_view digits = token.substr(slash + 1);
  return IsValidProblemName(token.substr(0, slash)) &&
         digits.find_first_not_of("0123456789") == std::string_view::npos;
}

RunManager::RunManager(Store* store, RunManagerOptions options)
    : store_(store), options_(std::move(options)), in_flight_(store) {
  if (!options_.datasets.count("builtin")) options_.datasets["builtin"] = EVALD_BUILTIN_DATASET_DIR;
  options_.backend.policy = &options_.policy;
}

RunManager::~RunManager() {
  Stop();
}

StatusOr<v1::Checkpoint> RunManager::GetCheckpoint(const std::string& id) const {
  v1::Checkpoint ck;
  Status st = store_->Get(Family::kCheckpoints, id, &ck);
  if (!st.ok())
    return st.code() == Status::Code::kNotFound ? Status::NotFound("no checkpoint " + id) : st;
  return ck;
}

StatusOr<std::vector<v1::Checkpoint>> RunManager::ListCheckpoints() const {
  std::vector<v1::Checkpoint> out;
  Status st = store_->Scan(Family::kCheckpoints, "", [&](std::string_view, std::string_view value) {
    v1::Checkpoint ck;
    if (ck.ParseFromArray(value.data(), static_cast<int>(value.size())))
      out.push_back(std::move(ck));
    return true;
  });
  if (!st.ok()) return st;
  return out;
}

StatusOr<std::string> RunManager::GetRunBytes(const std::string& id) const {
  std::string bytes;
  Status st = store_->GetBytes(Family::kRuns, id, &bytes);
  if (!st.ok()) return st.code() == Status::Code::kNotFound ? Status::NotFound("no run " + id) : st;
  return bytes;
}

StatusOr<v1::Run> RunManager::GetRun(const std::string& id) const {
  auto bytes = GetRunBytes(id);
  if (!bytes.ok()) return bytes.status();
  v1::Run run;
  if (!run.ParseFromString(*bytes))
    return Status::Corruption("stored run " + id + " does not parse");
  return run;
}

StatusOr<std::vector<v1::Run>> RunManager::ListRuns(const RunFilter& f) const {
  std::vector<v1::Run> out;
  Status st = store_->Scan(Family::kRuns, "", [&](std::string_view, std::string_view value) {
    v1::Run run;
    if (!run.ParseFromArray(value.data(), static_cast<int>(value.size()))) return true;
    if (!f.checkpoint_id.empty() && run.spec().checkpoint_id() != f.checkpoint_id) return true;
    if (!f.dataset.empty() && run.spec().dataset() != f.dataset) return true;
    if (!f.label_key.empty()) {
      auto it = run.spec().labels().find(f.label_key);
      if (it == run.spec().labels().end() ||
          (!f.label_value.empty() && it->second != f.label_value))
        return true;
    }
    // Listings carry the summary, not the per-problem detail.
    if (!f.with_problems) run.clear_problems();
    run.clear_calibration();
    out.push_back(std::move(run));
    return true;
  });
  if (!st.ok()) return st;
  return out;
}

StatusOr<std::vector<v1::StoredSample>> RunManager::ListSamples(
    const std::string& run_id, const std::string& page_token, int limit,
    std::string* next_page_token) const {
  if (!page_token.empty() && !ValidPageToken(page_token))
    return Status::InvalidArgument("page_token '" + page_token.substr(0, 80) +
                                   "' is not one this API handed out (PROBLEM/00000042)");
  std::vector<v1::StoredSample> out;
  next_page_token->clear();
  std::string prefix = run_id + "/";
  Status st =
      store_->Scan(Family::kSamples, prefix, [&](std::string_view key, std::string_view value) {
        if (!page_token.empty() && std::string(key.substr(prefix.size())) <= page_token)
          return true;
        if (static_cast<int>(out.size()) == limit) {
          // The token is the position of the last sample returned ("problem/index").
          *next_page_token = fmt::format("{}/{:08d}", out.back().problem(), out.back().index());
          return false;
        }
        v1::StoredSample s;
        if (s.ParseFromArray(value.data(), static_cast<int>(value.size())))
          out.push_back(std::move(s));
        return true;
      });
  if (!st.ok()) return st;
  return out;
}

StatusOr<v1::EvalReport> RunManager::Report(const std::string& run_id) const {
  auto run = GetRun(run_id);
  if (!run.ok()) return run.status();
  v1::EvalReport report;
  report.set_dataset(run->spec().dataset());
  report.set_task(run->spec().task());
  report.set_simulator(run->spec().simulator());
  report.set_simulator_version(run->simulator_version());
  for (int k : run->spec().k()) report.add_k(k);
  for (const auto& c : run->calibration()) *report.add_calibration() = c;
  for (const auto& e : run->input_errors()) *report.add_input_errors() = e;
  report.set_sandbox_layers(run->sandbox_layers());
  report.set_exact_mismatch_counts(run->spec().exact_mismatch_counts());
  *report.mutable_cross_checks() = run->spec().cross_checks();
  if (run->has_serving()) *report.mutable_serving() = run->serving();
  if (!run->spec().checkpoint_id().empty()) *report.mutable_prompt() = run->spec().prompt();
  Status st =
      store_->Scan(Family::kSamples, run_id + "/", [&](std::string_view, std::string_view value) {
        v1::StoredSample s;
        if (s.ParseFromArray(value.data(), static_cast<int>(value.size())) && s.graded())
          *report.add_samples() = s.result();
        return true;
      });
  if (!st.ok()) return st;
  ComputeMetrics({run->spec().k().begin(), run->spec().k().end()}, &report);
  return report;
}

int RunManager::CountCachedGenerations(const std::string& run_id) const {
  int cached = 0;
  (void)store_->Scan(Family::kSamples, run_id + "/", [&](std::string_view, std::string_view value) {
    v1::StoredSample s;
    if (s.ParseFromArray(value.data(), static_cast<int>(value.size())) && s.from_generation_cache())
      ++cached;
    return true;
  });
  return cached;
}

// The run's end: cancelled, left RUNNING for the next start (stopping), failed with what is
// missing, or succeeded with its scores.
}  // namespace evald
