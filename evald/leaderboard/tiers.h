// Which runs of a leaderboard are actually distinguishable: every pair compared on pass@1
// (paired over the problems both have: exact sign-flip permutation test, paired bootstrap
// interval), the p-values Holm-adjusted over all tested pairs, and the runs grouped into tiers -
// each tier the best remaining run and every remaining run not significantly different from it.
#pragma once

#include <map>
#include <string>

#include "evald/proto/api.pb.h"
#include "evald/proto/records.pb.h"

namespace evald {

// Fills board->pairs, each row's tier, alpha and tier_method. `runs` by id hold the per-problem
// results (Run.problems) of the board's rows; rows must already be ranked.
void AssignTiers(const std::map<std::string, const v1::Run*>& runs, double alpha,
                 v1::Leaderboard* board);

// Holm's step-down adjustment of p-values (same order as given).
std::vector<double> HolmAdjust(const std::vector<double>& p);

}  // namespace evald
