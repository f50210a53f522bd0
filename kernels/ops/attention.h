// Scaled dot-product attention of one query head over a KV cache: scores against the cached
// keys of positions [first, last], optional soft-capping (Gemma 2), softmax, and the weighted
// sum of the cached values. The scalar path is the oracle; the AVX-512 path computes the same
// with 16 lanes and a vector exp (results equal up to summation order and 2 ulp in exp).
#pragma once

#include <cstdint>

#include "kernels/ops/dot.h"

namespace evald::kernels {

struct AttentionHead {
  int head_dim = 0;
  int64_t stride = 0;    // floats from one position's key (or value) to the next
  float scale = 1.0f;    // applied to q . k
  float softcap = 0.0f;  // > 0: score = tanh(score / softcap) * softcap
};

// out[0..head_dim) for query q; keys/values point at position 0 of this KV head; scores is
// scratch of at least last + 1 floats.
void Attend(const AttentionHead& head, const float* q, const float* keys, const float* values,
            int first, int last, float* scores, float* out, Isa isa);

}  // namespace evald::kernels
