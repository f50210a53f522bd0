#include "kernels/generate/sampler.h"

#include <algorithm>
#include <cmath>

namespace evald::kernels {

namespace {

// Higher probability first, lower token id on ties.
bool Before(const std::pair<float, int>& a, const std::pair<float, int>& b) {
  return a.first > b.first || (a.first == b.first && a.second < b.second);
}

}  // namespace

// Only as much of the vocabulary is sorted as the filters need: top-k sorts k candidates,
// top-p sorts a growing prefix until it holds p of the mass (language models put nearly all of
// it on a few dozen tokens), and without either nothing is sorted - sampling walks the
// candidates in id order, which draws from the same distribution.
int Sampler::Sample(const float* logits, int vocab) {
  if (options_.temperature <= 0.0f) {
    int best = 0;
    for (int i = 1; i < vocab; ++i)
      if (logits[i] > logits[best]) best = i;  // first maximum wins ties
    return best;
  }
  float max = logits[0];
  for (int i = 1; i < vocab; ++i) max = std::max(max, logits[i]);
  candidates_.resize(static_cast<size_t>(vocab));
  for (int i = 0; i < vocab; ++i) candidates_[static_cast<size_t>(i)] = {logits[i], i};
  size_t n = candidates_.size();
  bool sorted = false;  // candidates_[0, n) in Before order
  if (options_.top_k > 0 && static_cast<size_t>(options_.top_k) < n) {
    n = static_cast<size_t>(options_.top_k);
    std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<long>(n),
                      candidates_.end(), Before);
    sorted = true;
  }
  // Softmax with temperature over the survivors.
  const float inv_t = 1.0f / options_.temperature;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    candidates_[i].first = std::exp((candidates_[i].first - max) * inv_t);
    sum += candidates_[i].first;
  }
  for (size_t i = 0; i < n; ++i)
    candidates_[i].first = static_cast<float>(candidates_[i].first / sum);
  if (options_.top_p < 1.0f) {
    // The smallest prefix in probability order holding top_p of the mass.
    size_t have = sorted ? n : 0;
    for (size_t want = std::min<size_t>(64, n);; want = std::min(n, want * 4)) {
      if (have < want) {
        std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<long>(want),
                          candidates_.begin() + static_cast<long>(n), Before);
        have = want;
      }
      double cum = 0;
      size_t cut = 0;
      for (size_t i = 0; i < have; ++i) {
        cum += candidates_[i].first;
        if (cum >= options_.top_p) {
          cut = i + 1;
          break;
        }
      }
      if (cut > 0) {
        n = cut;
        break;
      }
      if (have == n) break;  // rounding left the total just under top_p: keep everything
    }
  }
  if (options_.min_p > 0.0f) {
    float p_max = 0;
    for (size_t i = 0; i < n; ++i) p_max = std::max(p_max, candidates_[i].first);
    const float floor = options_.min_p * p_max;
    // Keep the order; the most probable candidate always survives.
    auto end =
        std::stable_partition(candidates_.begin(), candidates_.begin() + static_cast<long>(n),
                              [&](const auto& c) { return c.first >= floor; });
    n = std::max<size_t>(1, static_cast<size_t>(end - candidates_.begin()));
  }
  double total = 0;
  for (size_t i = 0; i < n; ++i) total += candidates_[i].first;
  const double u = std::uniform_real_distribution<double>(0.0, total)(rng_);
  double cum = 0;
  for (size_t i = 0; i < n; ++i) {
    cum += candidates_[i].first;
    if (u < cum) return candidates_[i].second;
  }
  return candidates_[n - 1].second;
}

}  // namespace evald::kernels
