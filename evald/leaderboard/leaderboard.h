// Leaderboards over finished runs: CSV, JSON, Markdown and a self-contained HTML page
// (sortable table, pass@k with confidence intervals, failure-category breakdown chart).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "evald/leaderboard/tiers.h"
#include "evald/proto/api.pb.h"

namespace evald {

// Rows for the SUCCEEDED runs, ranked by pass@rank_k (descending), grouped into tiers of runs
// not significantly different (tiers.h; needs the runs' per-problem results), with every pair's
// comparison.
v1::Leaderboard BuildLeaderboard(const std::vector<v1::Run>& runs,
                                 const std::map<std::string, v1::Checkpoint>& checkpoints,
                                 int rank_k = 1, double alpha = 0.05,
                                 PairwiseCache* cache = nullptr);

// A run's labels as "key=value,key=value", keys in order ("" when it has none).
std::string LabelsText(const v1::Run& run);

// format: csv | json | markdown (md) | html
StatusOr<std::string> RenderLeaderboard(const v1::Leaderboard& board, std::string_view format);

// MIME type of a format.
std::string LeaderboardContentType(std::string_view format);

}  // namespace evald
