#include "kernels/generate/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace evald::kernels {

namespace {

// Higher weight first, lower token id on ties.
bool Before(const std::pair<float, int>& a, const std::pair<float, int>& b) {
  return a.first > b.first || (a.first == b.first && a.second < b.second);
}

int Argmax(const float* logits, int vocab) {
  int best = 0;
  for (int i = 1; i < vocab; ++i)
    if (logits[i] > logits[best] || std::isnan(logits[best])) best = i;  // the first maximum
  return best;
}

// The sum of x[0, n) in double, in eight independent lanes (a fixed order: the same input gives
// the same sum).
double Sum(const float* x, int n) {
  constexpr int kLanes = 8;
  double lanes[kLanes] = {};
  int i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lanes[j] += x[i + j];
  for (; i < n; ++i) lanes[0] += x[i];
  double sum = 0;
  for (double lane : lanes) sum += lane;
  return sum;
}

// Candidates are drawn by blocks: the block sums first, then the block the draw falls in, so
// that a draw walks a few hundred weights in sequence rather than the whole vocabulary.
constexpr int kDrawBlock = 256;

}  // namespace

// Only as much of the vocabulary is sorted as the filters need: top-k selects k candidates,
// top-p sorts the candidates of the heaviest weight buckets holding p of the mass (one pass over
// the vocabulary, then a sort of about the nucleus), and without either nothing is sorted - the
// draw walks the tokens in id order, which draws from the same distribution.
int Sampler::Sample(const float* logits, int vocab) {
  if (options_.temperature <= 0.0f || !std::isfinite(1.0f / options_.temperature))
    return Argmax(logits, vocab);
  int n = vocab;
  bool ids = false;  // candidates_ names the candidates (else: every token, in id order)
  if (options_.top_k > 0 && options_.top_k < vocab) {
    order_.resize(static_cast<size_t>(vocab));
    for (int i = 0; i < vocab; ++i) order_[static_cast<size_t>(i)] = {logits[i], i};
    n = options_.top_k;
    std::partial_sort(order_.begin(), order_.begin() + n, order_.end(), Before);
    candidates_.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      candidates_[static_cast<size_t>(i)] = order_[static_cast<size_t>(i)].second;
    ids = true;
  }
  if (!Weigh(logits, n, ids)) return Argmax(logits, vocab);  // an infinite logit takes it all
  if (options_.top_p < 1.0f) {
    n = CutToTopP(n, ids);
    ids = true;
  }
  if (options_.min_p > 0.0f) {
    n = CutToMinP(n, ids);
    ids = true;
  }
  return Draw(n, ids);
}

bool Sampler::Weigh(const float* logits, int n, bool ids) {
  weights_.resize(static_cast<size_t>(n));
  float* w = weights_.data();
  const float* x = logits;
  if (ids) {
    for (int i = 0; i < n; ++i) w[i] = logits[candidates_[static_cast<size_t>(i)]];
    x = w;
  }
  return std::isfinite(softmax_weights_(x, w, n, 1.0f / options_.temperature));
}

// Weights lie in [0, 1] (the heaviest is exactly 1, a NaN logit weighs 0). A weight's float
// bits shifted right by kBucketShift keep its exponent and 3 mantissa bits: bucket order is
// weight order, each bucket spans at most a factor of 2^(1/8), and equal weights share one.
constexpr int kBucketShift = 20;
constexpr int kWeightBuckets = (0x3F800000 >> kBucketShift) + 1;  // 1.0f's bucket is the last

int WeightBucket(float w) {
  uint32_t bits;
  std::memcpy(&bits, &w, sizeof bits);
  const uint32_t bucket = bits >> kBucketShift;
  return bucket < kWeightBuckets ? static_cast<int>(bucket) : 0;  // not in [0, 1]: none occurs
}

int Sampler::CutToTopP(int n, bool ids) {
  const float* w = weights_.data();
  const double target = static_cast<double>(options_.top_p) * Sum(w, n);
  // The weight in each bucket, in kTables interleaved tables so that runs of one bucket do not
  // wait on each other's adds.
  constexpr int kTables = 4;
  bucket_mass_.assign(kTables * kWeightBuckets, 0.0);
  double* mass = bucket_mass_.data();
  int i = 0;
  for (; i + kTables <= n; i += kTables)
    for (int t = 0; t < kTables; ++t) mass[t * kWeightBuckets + WeightBucket(w[i + t])] += w[i + t];
  for (; i < n; ++i) mass[WeightBucket(w[i])] += w[i];
  // The heaviest buckets that hold target by that estimate.
  int bottom = kWeightBuckets;
  double estimate = 0;
  do {
    --bottom;
    for (int t = 0; t < kTables; ++t) estimate += mass[t * kWeightBuckets + bottom];
  } while (bottom > 0 && estimate < target);
  // Their candidates sorted are the prefix of all candidates sorted; the walk adds them up in
  // that order until target, one at least (a target of 0 keeps the heaviest). The estimate
  // adds in another order, so the walk can fall just short: then every other candidate follows
  // (all lighter, so the order stays sorted), and if even that falls short, rounding left the
  // total just under top_p: everything is kept.
  order_.clear();
  double cum = 0;
  int at = 0;
  for (auto [low, high] : {std::pair{bottom, kWeightBuckets}, std::pair{0, bottom}}) {
    const auto sorted = static_cast<std::ptrdiff_t>(order_.size());
    for (int c = 0; c < n; ++c) {
      const int b = WeightBucket(w[c]);
      if (b >= low && b < high)
        order_.emplace_back(w[c], ids ? candidates_[static_cast<size_t>(c)] : c);
    }
    std::sort(order_.begin() + sorted, order_.end(), Before);
    bool reached = false;
    while (at < static_cast<int>(order_.size()) && !reached)
      reached = (cum += order_[static_cast<size_t>(at++)].first) >= target;
    if (reached) break;
  }
  const int cut = at;  // n where the walk never reached target
  candidates_.resize(static_cast<size_t>(cut));
  weights_.resize(static_cast<size_t>(cut));
  for (int c = 0; c < cut; ++c) {
    weights_[static_cast<size_t>(c)] = order_[static_cast<size_t>(c)].first;
    candidates_[static_cast<size_t>(c)] = order_[static_cast<size_t>(c)].second;
  }
  return cut;
}

int Sampler::CutToMinP(int n, bool ids) {
  const float floor = options_.min_p * *std::max_element(weights_.data(), weights_.data() + n);
  // Keep the order; the heaviest candidate always survives.
  if (!ids) candidates_.clear();
  int kept = 0;
  for (int i = 0; i < n; ++i) {
    const float w = weights_[static_cast<size_t>(i)];
    if (w < floor) continue;
    weights_[static_cast<size_t>(kept)] = w;
    if (ids) {
      candidates_[static_cast<size_t>(kept)] = candidates_[static_cast<size_t>(i)];
    } else {
      candidates_.push_back(i);
    }
    ++kept;
  }
  return kept;
}

int Sampler::Draw(int n, bool ids) {
  const float* w = weights_.data();
  block_sums_.clear();
  double total = 0;
  for (int b = 0; b < n; b += kDrawBlock) {
    block_sums_.push_back(Sum(w + b, std::min(kDrawBlock, n - b)));
    total += block_sums_.back();
  }
  const double u = std::uniform_real_distribution<double>(0.0, total)(rng_);
  auto id = [&](int i) { return ids ? candidates_[static_cast<size_t>(i)] : i; };
  // The last candidate of [begin, end) with a weight (the heaviest weighs 1, so one exists).
  auto last_weighted = [&](int begin, int end) {
    int i = end - 1;
    while (i > begin && !(w[i] > 0)) --i;
    return id(i);
  };
  double cum = 0;
  for (size_t b = 0; b < block_sums_.size(); ++b) {
    const int begin = static_cast<int>(b) * kDrawBlock, end = std::min(n, begin + kDrawBlock);
    if (u >= cum + block_sums_[b]) {
      cum += block_sums_[b];
      continue;
    }
    for (int i = begin; i < end; ++i) {
      cum += w[i];
      if (u < cum) return id(i);
    }
    // The block's weights added in sequence fell just short of its sum in lanes.
    return last_weighted(begin, end);
  }
  return last_weighted(0, n);  // a draw of exactly the total
}

}  // namespace evald::kernels
