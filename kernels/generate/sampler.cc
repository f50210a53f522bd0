#include "kernels/generate/sampler.h"

#include <algorithm>
#include <cmath>

namespace evald::kernels {

int Sampler::Sample(const float* logits, int vocab) {
  if (options_.temperature <= 0.0f) {
    int best = 0;
    for (int i = 1; i < vocab; ++i)
      if (logits[i] > logits[best]) best = i;  // first maximum wins ties
    return best;
  }
  candidates_.resize(static_cast<size_t>(vocab));
  for (int i = 0; i < vocab; ++i) candidates_[static_cast<size_t>(i)] = {logits[i], i};
  std::sort(candidates_.begin(), candidates_.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  size_t n = candidates_.size();
  if (options_.top_k > 0) n = std::min(n, static_cast<size_t>(options_.top_k));
  // Softmax with temperature over the survivors (the first is the maximum).
  const float max = candidates_[0].first;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    candidates_[i].first = std::exp((candidates_[i].first - max) / options_.temperature);
    sum += candidates_[i].first;
  }
  for (size_t i = 0; i < n; ++i)
    candidates_[i].first = static_cast<float>(candidates_[i].first / sum);
  if (options_.top_p < 1.0f) {
    double cum = 0;
    for (size_t i = 0; i < n; ++i) {
      cum += candidates_[i].first;
      if (cum >= options_.top_p) {
        n = i + 1;
        break;
      }
    }
  }
  if (options_.min_p > 0.0f) {
    const float floor = options_.min_p * candidates_[0].first;
    size_t keep = 1;
    while (keep < n && candidates_[keep].first >= floor) ++keep;
    n = keep;
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
