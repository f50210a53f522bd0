// Which runs of a leaderboard are actually distinguishable: every pair compared on pass@1
// (paired over the problems both have: exact sign-flip permutation test, paired bootstrap
// interval), the p-values Holm-adjusted over all tested pairs, and the runs grouped into tiers -
// each tier the best remaining run and every remaining run not significantly different from it.
#pragma once

#include <map>
#include <string>

#include "base/thread_annotations.h"
#include "evald/proto/api.pb.h"
#include "evald/proto/records.pb.h"

namespace evald {

// The most runs of one board compared pairwise (their pairs: n(n-1)/2 paired tests).
inline constexpr int kMaxTieredRuns = 40;

// Pair comparisons already made: a finished run's results never change, so a pair's test is
// computed once per process (a leaderboard of 40 runs has 780 pairs; seconds the first time).
class PairwiseCache {
 public:
  bool Find(const std::string& key, v1::PairwiseComparison* out) EXCLUDES(mu_);
  void Keep(const std::string& key, const v1::PairwiseComparison& pair) EXCLUDES(mu_);

 private:
  static constexpr size_t kMaxEntries = 100000;
  Mutex mu_;
  std::map<std::string, v1::PairwiseComparison> pairs_ GUARDED_BY(mu_);
};

// Fills board->pairs, each row's tier, alpha and tier_method. `runs` by id hold the per-problem
// results (Run.problems) of the board's rows; rows must already be ranked.
void AssignTiers(const std::map<std::string, const v1::Run*>& runs, double alpha,
                 v1::Leaderboard* board, PairwiseCache* cache = nullptr);

// Holm's step-down adjustment of p-values (same order as given).
std::vector<double> HolmAdjust(const std::vector<double>& p);

}  // namespace evald
