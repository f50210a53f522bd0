#include "evald/server/run_records.h"

#include <fmt/format.h>

#include "datasets/dataset.h"
#include "evald/runs/stored_run.h"

namespace evald {

bool ValidPageToken(std::string_view token) {
  size_t slash = token.rfind('/');
  if (slash == std::string_view::npos || token.size() - slash - 1 != 8) return false;
  std::string_view digits = token.substr(slash + 1);
  return IsValidProblemName(token.substr(0, slash)) &&
         digits.find_first_not_of("0123456789") == std::string_view::npos;
}

StatusOr<v1::Checkpoint> RunRecords::GetCheckpoint(const std::string& id) const {
  v1::Checkpoint ck;
  Status st = store_.Get(Family::kCheckpoints, id, &ck);
  if (!st.ok())
    return st.code() == Status::Code::kNotFound ? Status::NotFound("no checkpoint " + id) : st;
  return ck;
}

StatusOr<std::vector<v1::Checkpoint>> RunRecords::ListCheckpoints() const {
  std::vector<v1::Checkpoint> out;
  Status st = store_.Scan(Family::kCheckpoints, "", [&](std::string_view, std::string_view value) {
    v1::Checkpoint ck;
    if (ck.ParseFromArray(value.data(), static_cast<int>(value.size())))
      out.push_back(std::move(ck));
    return true;
  });
  if (!st.ok()) return st;
  return out;
}

StatusOr<std::string> RunRecords::GetRunBytes(const std::string& id) const {
  std::string bytes;
  Status st = store_.GetBytes(Family::kRuns, id, &bytes);
  if (!st.ok()) return st.code() == Status::Code::kNotFound ? Status::NotFound("no run " + id) : st;
  return bytes;
}

StatusOr<v1::Run> RunRecords::GetRun(const std::string& id) const {
  auto bytes = GetRunBytes(id);
  if (!bytes.ok()) return bytes.status();
  v1::Run run;
  if (!run.ParseFromString(*bytes))
    return Status::Corruption("stored run " + id + " does not parse");
  return run;
}

StatusOr<std::vector<v1::Run>> RunRecords::ListRuns(const RunFilter& f) const {
  std::vector<v1::Run> out;
  Status st = store_.Scan(Family::kRuns, "", [&](std::string_view, std::string_view value) {
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

StatusOr<std::vector<v1::StoredSample>> RunRecords::ListSamples(
    const std::string& run_id, const std::string& page_token, int limit,
    std::string* next_page_token) const {
  if (!page_token.empty() && !ValidPageToken(page_token))
    return Status::InvalidArgument("page_token '" + page_token.substr(0, 80) +
                                   "' is not one this API handed out (PROBLEM/00000042)");
  std::vector<v1::StoredSample> out;
  next_page_token->clear();
  std::string prefix = run_id + "/";
  Status st =
      store_.Scan(Family::kSamples, prefix, [&](std::string_view key, std::string_view value) {
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

StatusOr<v1::EvalReport> RunRecords::Report(const std::string& run_id) const {
  auto run = GetRun(run_id);
  if (!run.ok()) return run.status();
  return StoredRunReport(store_, *run);
}

}  // namespace evald
