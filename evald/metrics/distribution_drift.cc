#include "evald/metrics/distribution_drift.h"

#include <algorithm>
#include <cmath>

namespace evald {

namespace {

// The smallest probability a log turns into (llama.cpp clamps the same way): a token a file
// gives probability 0 costs a finite, large amount instead of infinity.
constexpr double kMinProbability = 1e-30;

size_t Argmax(std::span<const float> v) {
  return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

TokenDrift CompareNextToken(std::span<const float> base, std::span<const float> candidate,
                            int next) {
  TokenDrift d;
  const size_t n = std::min(base.size(), candidate.size());
  for (size_t i = 0; i < n; ++i) {
    const double p = std::exp(static_cast<double>(base[i]));
    if (p > 0) d.kl += p * (static_cast<double>(base[i]) - candidate[i]);
  }
  d.kl = std::max(0.0, d.kl);  // rounding can take a near-zero sum below it
  d.same_top = n > 0 && Argmax(base.first(n)) == Argmax(candidate.first(n));
  if (next >= 0 && static_cast<size_t>(next) < n) {
    d.p_base = std::exp(static_cast<double>(base[next]));
    d.p_candidate = std::exp(static_cast<double>(candidate[next]));
  }
  return d;
}

void DriftAccumulator::Add(const TokenDrift& d) {
  kl_.push_back(d.kl);
  same_top_ += d.same_top;
  dp_squares_ += (d.p_candidate - d.p_base) * (d.p_candidate - d.p_base);
  nll_base_ -= std::log(std::max(d.p_base, kMinProbability));
  nll_candidate_ -= std::log(std::max(d.p_candidate, kMinProbability));
}

void DriftAccumulator::Merge(const DriftAccumulator& other) {
  kl_.insert(kl_.end(), other.kl_.begin(), other.kl_.end());
  same_top_ += other.same_top_;
  dp_squares_ += other.dp_squares_;
  nll_base_ += other.nll_base_;
  nll_candidate_ += other.nll_candidate_;
}

v1::DriftFigures DriftAccumulator::Figures() const {
  v1::DriftFigures f;
  const size_t n = kl_.size();
  f.set_tokens(static_cast<int>(n));
  if (n == 0) return f;
  double sum = 0;
  for (double k : kl_) sum += k;
  std::vector<double> sorted = kl_;
  std::sort(sorted.begin(), sorted.end());
  // The nearest-rank 99th percentile.
  const size_t rank = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(n)));
  f.set_mean_kl(sum / n);
  f.set_p99_kl(sorted[std::max<size_t>(rank, 1) - 1]);
  f.set_top1_agreement(static_cast<double>(same_top_) / n);
  f.set_dp_rms(std::sqrt(dp_squares_ / n));
  f.set_ppl_ratio(std::exp((nll_candidate_ - nll_base_) / n));
  return f;
}

}  // namespace evald
