#include "evald/leaderboard/tiers.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "evald/metrics/run_comparison.h"

namespace evald {

namespace {

v1::EvalReport ReportOf(const v1::Run& run) {
  v1::EvalReport r;
  for (const auto& p : run.problems()) *r.add_problems() = p;
  return r;
}

v1::PairwiseComparison Compare(const v1::Run& a, const v1::Run& b, double alpha) {
  CompareOptions options;
  options.ks = {1};
  options.alpha = alpha;
  options.bootstrap_resamples = 2000;  // one interval per pair: enough for a 95% interval
  const v1::Comparison c = CompareReports(ReportOf(a), ReportOf(b), options);
  v1::PairwiseComparison pair;
  pair.set_run_a(a.id());
  pair.set_run_b(b.id());
  pair.set_shared_problems(c.shared_problems());
  pair.set_p(-1);
  pair.set_p_holm(-1);
  pair.set_mde(-1);
  if (c.ks_size() == 0) return pair;  // no shared problem: untested
  pair.set_delta(c.ks(0).delta());
  *pair.mutable_delta_ci95() = c.ks(0).delta_ci95();
  pair.set_p(DecisiveP(c, 1));
  pair.set_mde(c.ks(0).mde());
  return pair;
}

}  // namespace

bool PairwiseCache::Find(const std::string& key, v1::PairwiseComparison* out) {
  MutexLock lock(mu_);
  auto it = pairs_.find(key);
  if (it == pairs_.end()) return false;
  *out = it->second;
  return true;
}

void PairwiseCache::Keep(const std::string& key, const v1::PairwiseComparison& pair) {
  MutexLock lock(mu_);
  if (pairs_.size() >= kMaxEntries) pairs_.clear();
  pairs_[key] = pair;
}

std::vector<double> HolmAdjust(const std::vector<double>& p) {
  const size_t m = p.size();
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  std::vector<double> adjusted(m);
  double running = 0;
  for (size_t rank = 0; rank < m; ++rank) {
    running = std::max(running, std::min(1.0, (m - rank) * p[order[rank]]));
    adjusted[order[rank]] = running;
  }
  return adjusted;
}

void AssignTiers(const std::map<std::string, const v1::Run*>& runs, double alpha,
                 v1::Leaderboard* board, PairwiseCache* cache) {
  board->set_alpha(alpha);
  board->set_tier_method(
      "pass@1, every pair of runs over the same problem set paired over its problems (exact "
      "sign-flip permutation test), Holm-adjusted over all tested pairs; within a problem set a "
      "tier is the best remaining run and every remaining run not significantly different from "
      "it; runs over different problem sets are never compared; only the top " +
      std::to_string(kMaxTieredRuns) + " runs of a problem set are compared (the rest: tier 0)");
  // Rows come grouped by problem set, ranked within it. Pairs grow with the square of a
  // group's runs: its top kMaxTieredRuns are compared, the rest get tier 0 ("not compared").
  std::vector<bool> tiered(static_cast<size_t>(board->rows_size()), false);
  for (int i = 0, in_set = 0; i < board->rows_size(); ++i) {
    in_set =
        i > 0 && board->rows(i).problem_set() == board->rows(i - 1).problem_set() ? in_set + 1 : 0;
    tiered[static_cast<size_t>(i)] = in_set < kMaxTieredRuns;
  }
  auto same_set = [&](int i, int j) {
    return board->rows(i).problem_set() == board->rows(j).problem_set();
  };
  std::map<std::pair<int, int>, int> pair_of;  // (row i, row j), i < j -> index in pairs
  for (int i = 0; i < board->rows_size(); ++i) {
    if (!tiered[static_cast<size_t>(i)]) continue;
    for (int j = i + 1; j < board->rows_size() && same_set(i, j); ++j) {
      if (!tiered[static_cast<size_t>(j)]) continue;
      auto a = runs.find(board->rows(i).run_id()), b = runs.find(board->rows(j).run_id());
      if (a == runs.end() || b == runs.end()) continue;
      pair_of[{i, j}] = board->pairs_size();
      // Finished runs only (the board's rows): their results are final.
      const std::string key = a->first + "|" + b->first + "|" + std::to_string(alpha);
      v1::PairwiseComparison* pair = board->add_pairs();
      if (cache && cache->Find(key, pair)) continue;
      *pair = Compare(*a->second, *b->second, alpha);
      if (cache) cache->Keep(key, *pair);
    }
  }
  std::vector<double> tested;
  std::vector<int> index;
  for (int k = 0; k < board->pairs_size(); ++k)
    if (board->pairs(k).p() >= 0) {
      tested.push_back(board->pairs(k).p());
      index.push_back(k);
    }
  const std::vector<double> adjusted = HolmAdjust(tested);
  for (size_t t = 0; t < index.size(); ++t) {
    v1::PairwiseComparison* pair = board->mutable_pairs(index[t]);
    pair->set_p_holm(adjusted[t]);
    pair->set_significant(adjusted[t] < alpha);
  }
  auto significant = [&](int i, int j) {
    auto it = pair_of.find({std::min(i, j), std::max(i, j)});
    return it != pair_of.end() && board->pairs(it->second).significant();
  };
  int tier = 0;
  for (int leader = 0; leader < board->rows_size(); ++leader) {
    if (leader > 0 && !same_set(leader, leader - 1)) tier = 0;  // tiers restart per set
    if (!tiered[static_cast<size_t>(leader)] || board->rows(leader).tier() != 0) continue;
    board->mutable_rows(leader)->set_tier(++tier);
    for (int j = leader + 1; j < board->rows_size() && same_set(leader, j); ++j)
      if (tiered[static_cast<size_t>(j)] && board->rows(j).tier() == 0 && !significant(leader, j))
        board->mutable_rows(j)->set_tier(tier);
  }
}

}  // namespace evald
