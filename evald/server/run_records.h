// The read side of a store's runs: checkpoints, runs, their samples (by page) and reports, as
// stored. What the API's GET routes serve, and what the CLI uses to read a store (`compare
// --data`, `export`, `report train-serve --data`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "evald/proto/eval.pb.h"
#include "evald/proto/records.pb.h"
#include "evald/store/store.h"

namespace evald {

struct RunFilter {
  std::string checkpoint_id;
  std::string dataset;
  std::string label_key, label_value;
  bool with_problems = false;  // keep per-problem results (leaderboard tiers need them)

  // "KEY" (any value) or "KEY=VALUE".
  void SetLabel(const std::string& label) {
    const size_t eq = label.find('=');
    label_key = label.substr(0, eq);
    label_value = eq == std::string::npos ? "" : label.substr(eq + 1);
  }
};

// "PROBLEM/00000042": the form of the page tokens ListSamples hands out.
bool ValidPageToken(std::string_view token);

class RunRecords {
 public:
  explicit RunRecords(const Store& store) : store_(store) {}

  StatusOr<v1::Checkpoint> GetCheckpoint(const std::string& id) const;
  StatusOr<std::vector<v1::Checkpoint>> ListCheckpoints() const;
  // A run's stored record as bytes (what GetRun parses), for callers that cache by content.
  StatusOr<std::string> GetRunBytes(const std::string& id) const;
  StatusOr<v1::Run> GetRun(const std::string& id) const;
  StatusOr<std::vector<v1::Run>> ListRuns(const RunFilter& filter) const;
  // Samples of a run in (problem, index) order, from `page_token` (exclusive), at most `limit`.
  // A page_token that this API did not hand out is an InvalidArgument (HTTP 400).
  StatusOr<std::vector<v1::StoredSample>> ListSamples(const std::string& run_id,
                                                      const std::string& page_token, int limit,
                                                      std::string* next_page_token) const;
  // The run's results as an evaluation report (for compare and leaderboards).
  StatusOr<v1::EvalReport> Report(const std::string& run_id) const;

 private:
  const Store& store_;
};

}  // namespace evald
