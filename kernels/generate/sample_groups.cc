#include "kernels/generate/sample_groups.h"

#include <algorithm>
#include <map>

namespace evald::kernels {

SampleGroups::SampleGroups(int n, bool merge) : merge_(merge), rep_(static_cast<size_t>(n), 0) {
  if (!merge_)
    for (int s = 0; s < n; ++s) rep_[s] = s;
}

void SampleGroups::Next(const std::vector<int>& next, const std::vector<bool>& done,
                        GroupStep* step) {
  const int n = static_cast<int>(rep_.size());
  step->copies.clear();
  step->sequences.clear();
  step->tokens.clear();
  step->vector_of.assign(static_cast<size_t>(n), -1);
  // The new groups: (old representative, token drawn) -> the sequence that computes it. Samples
  // go in order, so a group whose old representative left it goes to its first sample.
  std::map<std::pair<int, int>, int> group;
  std::vector<int> rep(rep_);
  for (int s = 0; merge_ && s < n; ++s) {  // unmerged, rep_[s] == s throughout
    if (done[s]) continue;
    const int old = rep_[s];
    const std::pair<int, int> key{old, next[s]};
    auto [it, added] = group.try_emplace(key, s);
    if (added) {
      const bool kept = !done[old] && next[old] == next[s];
      it->second = kept ? old : s;
      if (!kept) step->copies.emplace_back(old, s);
    }
    rep[s] = it->second;
  }
  rep_ = std::move(rep);
  for (int s = 0; s < n; ++s)
    if (!done[s] && rep_[s] == s) {
      step->sequences.push_back(s);  // increasing
      step->tokens.push_back(next[s]);
    }
  for (int s = 0; s < n; ++s) {
    if (done[s]) continue;
    const auto at = std::lower_bound(step->sequences.begin(), step->sequences.end(), rep_[s]);
    step->vector_of[s] = static_cast<int>(at - step->sequences.begin());
  }
}

}  // namespace evald::kernels
