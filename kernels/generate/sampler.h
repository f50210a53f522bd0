// Token sampling: temperature, top-k, top-p, min-p, with a random stream per sample seeded
// from that sample's own seed, so each sample is reproducible whatever else is generated with it.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace evald::kernels {

struct SamplingOptions {
  float temperature = 0.0f;  // <= 0: greedy
  int top_k = 0;             // 0: off
  float top_p = 1.0f;        // 1: off
  float min_p = 0.0f;        // 0: off
};

class Sampler {
 public:
  Sampler(SamplingOptions options, uint64_t seed) : options_(options), rng_(seed) {}
  int Sample(const float* logits, int vocab);

 private:
  SamplingOptions options_;
  std::mt19937_64 rng_;
  std::vector<std::pair<float, int>> candidates_;
};

}  // namespace evald::kernels
