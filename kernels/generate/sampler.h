// Token sampling: temperature, top-k, top-p, min-p, with a random stream per sample seeded
// from that sample's own seed, so each sample is reproducible whatever else is generated with it.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "kernels/ops/activations.h"

namespace evald::kernels {

struct SamplingOptions {
  float temperature = 0.0f;  // <= 0: greedy
  int top_k = 0;             // 0: off
  float top_p = 1.0f;        // 1: off
  float min_p = 0.0f;        // 0: off
};

class Sampler {
 public:
  // weights: how the candidates' weights are computed (the session's kernel table's: the AVX2
  // and AVX-512 ones are equal bit for bit, so a sample draws the same token on both paths
  // where they compute the same logits).
  Sampler(SamplingOptions options, uint64_t seed, SoftmaxWeightsFn weights = &SoftmaxWeightsScalar)
      : options_(options), rng_(seed), softmax_weights_(weights) {}
  int Sample(const float* logits, int vocab);

 private:
  // The weights exp((logit - max) / temperature) of candidates_ (ids) into weights_, or of every
  // token in id order when ids is false; the largest is exactly 1. False where the largest logit
  // is infinite or none is a number.
  bool Weigh(const float* logits, int n, bool ids);
  // Keeps the lightest-first tail out: the smallest set, heaviest first (lower id on ties),
  // holding top_p of the total weight of the n candidates; returns its size.
  int CutToTopP(int n, bool ids);
  // Keeps the candidates of at least min_p x the heaviest's weight, in their order.
  int CutToMinP(int n, bool ids);
  // One candidate drawn with probability weight / total.
  int Draw(int n, bool ids);

  SamplingOptions options_;
  std::mt19937_64 rng_;
  SoftmaxWeightsFn softmax_weights_;
  std::vector<int> candidates_;               // token ids, where a filter picked or ordered them
  std::vector<float> weights_;                // weights_[i]: candidate i's
  std::vector<std::pair<float, int>> order_;  // (logit or weight, id) while a filter sorts
  std::vector<double> block_sums_;            // the draw's
  std::vector<double> bucket_mass_;           // top-p's weight per bucket of weights
};

}  // namespace evald::kernels
