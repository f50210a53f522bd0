// Scaled dot-product attention of one query head over a KV cache: scores against the cached
// keys of positions [first, last], optional soft-capping (Gemma 2), softmax, and the weighted
// sum of the cached values. The scalar path (attention.cc) is the oracle; the AVX-512 paths
// (attention_avx512.cc, attention_q8_0_avx512.cc over a Q8_0 cache) and the AVX2 one
// (attention_avx2.cc) compute the same with 16 or 8 lanes and a vector exp (results equal up to
// summation order and 2 ulp in exp). The kernel table (kernel_table.h) says which one runs.
#pragma once

#include <cstdint>

#include "kernels/quant/blocks.h"

namespace evald::kernels {

struct AttentionHead {
  int head_dim = 0;
  int64_t stride = 0;    // floats from one position's key (or value) to the next
  float scale = 1.0f;    // applied to q . k
  float softcap = 0.0f;  // > 0: score = tanh(score / softcap) * softcap
  // > 0: the cache is a ring of `ring` positions, position t at row t % ring (a sliding-window
  // layer keeps only its window); 0: position t at row t.
  int ring = 0;
  // > 0: positions [0, prefix) are read `prefix_offset` values away (another sequence's rows
  // of a prompt the two share; with a ring, that sequence's row of the same slot).
  int prefix = 0;
  int64_t prefix_offset = 0;
  // > 0: the scores of positions [first, first + scored) come with the call, already in `scores`
  // (scaled and capped, from the same instruction set's SharedScoresFn, or SharedScoresQ8_0Fn
  // over a Q8_0 cache); the kernels only read them.
  int scored = 0;
  int64_t Row(int t) const { return ring > 0 ? t % ring : t; }
  // Where position t's key (and value) starts, in values from the keys (values) pointer.
  int64_t At(int t) const { return (t < prefix ? prefix_offset : 0) + Row(t) * stride; }
};

// The form of the grouped attention functions below, over a float cache and over a Q8_0 one (the
// kernel table holds one of each).
using AttendFn = void (*)(const AttentionHead& head, int heads, const float* q, const float* keys,
                          const float* values, int first, int last, float* scores, float* out);
using AttendQ8_0Fn = void (*)(const AttentionHead& head, int heads, const float* q,
                              const BlockQ8_0* keys, const BlockQ8_0* values, int64_t block_stride,
                              int first, int last, float* scores, float* out);

// `heads` query heads over one KV head (grouped-query attention; 1 for plain multi-head):
// out[g * head_dim, (g + 1) * head_dim) for query q + g * head_dim; keys/values point at row 0 of
// this KV head; scores is scratch of at least heads x (last + 1) floats (head g's indexed by
// position from g x (last + 1)). A head's result does not depend on the others of the call.
void AttendScalar(const AttentionHead& head, int heads, const float* q, const float* keys,
                  const float* values, int first, int last, float* scores, float* out);
// Head sizes that are not a multiple of 16 up to 256 take the scalar path.
void AttendAvx512(const AttentionHead& head, int heads, const float* q, const float* keys,
                  const float* values, int first, int last, float* scores, float* out);
// Head sizes that are not a multiple of 8 up to 256 take the scalar path.
void AttendAvx2(const AttentionHead& head, int heads, const float* q, const float* keys,
                const float* values, int first, int last, float* scores, float* out);

// The scores of many query heads over the same cached positions, each block of keys read once
// for all of them: the heads of several vectors that attend over one KV head's rows (n samples
// over the prompt they share; a prefill chunk's tokens over the positions before it). Head i's
// query at q[i], its scores of positions [first, last] at scores[i][t], scaled and soft-capped:
// bit for bit what the attend kernel of the same instruction set computes for them, so that a
// head's result is the same whether its scores came from here (AttentionHead::scored) or not.
using SharedScoresFn = void (*)(const AttentionHead& head, int heads, const float* const* q,
                                const float* keys, int first, int last, float* const* scores);
void SharedScoresScalar(const AttentionHead& head, int heads, const float* const* q,
                        const float* keys, int first, int last, float* const* scores);
// Head sizes that are not a multiple of 16 up to 256 go head by head through the scalar dot,
// which AttendAvx512 does not use for them either (it takes the scalar path).
void SharedScoresAvx512(const AttentionHead& head, int heads, const float* const* q,
                        const float* keys, int first, int last, float* const* scores);

// An integer Q8_0 block dot (dot.h), for the scores against a Q8_0 cache.
using BlockDotQ8_0Fn = float (*)(const BlockQ8_0* w, const BlockQ8_0* x, int64_t n);

// The same over a cache of Q8_0 blocks (llama.cpp's q8_0 cache type), as ggml computes it: the
// query is quantized to Q8_0 too and each score is an integer block dot; the values are
// dequantized as they are summed. keys/values point at this KV head's first block at position 0,
// `block_stride` blocks from one position to the next; head_dim a multiple of 32.
void AttendQ8_0(const AttentionHead& head, const float* q, const BlockQ8_0* keys,
                const BlockQ8_0* values, int64_t block_stride, int first, int last, float* scores,
                float* out, BlockDotQ8_0Fn dot);

// Position t's score over a Q8_0 cache as AttendQ8_0 computes it: the block dot of its keys
// and the quantized query, scaled and capped.
float ScoreQ8_0(const AttentionHead& head, const BlockQ8_0* query, const BlockQ8_0* keys,
                int64_t block_stride, int t, BlockDotQ8_0Fn dot);

// The scores of many query heads over the same positions of a Q8_0 cache (SharedScoresFn's
// counterpart): bit for bit what the same instruction set's attend_q8_0 computes for them.
using SharedScoresQ8_0Fn = void (*)(const AttentionHead& head, int heads, const float* const* q,
                                    const BlockQ8_0* keys, int64_t block_stride, int first,
                                    int last, float* const* scores);
// Head by head, each query quantized and scored with `dot` (ScoreQ8_0).
void SharedScoresQ8_0ByDot(const AttentionHead& head, int heads, const float* const* q,
                           const BlockQ8_0* keys, int64_t block_stride, int first, int last,
                           float* const* scores, BlockDotQ8_0Fn dot);
// As AttendQ8_0Heads<kDot> scores.
template <BlockDotQ8_0Fn kDot>
void SharedScoresQ8_0Heads(const AttentionHead& head, int heads, const float* const* q,
                           const BlockQ8_0* keys, int64_t block_stride, int first, int last,
                           float* const* scores) {
  SharedScoresQ8_0ByDot(head, heads, q, keys, block_stride, first, last, scores, kDot);
}
// As AttendQ8_0Avx512 scores: per block of 16 positions the keys transposed once (four values
// of a position to a lane) and each head's integer dots by vpdpbusd, then the same float steps;
// what AttendQ8_0Avx512 sends head by head goes so here too.
void SharedScoresQ8_0Avx512(const AttentionHead& head, int heads, const float* const* q,
                            const BlockQ8_0* keys, int64_t block_stride, int first, int last,
                            float* const* scores);

// `heads` query heads over one KV head of a Q8_0 cache (the grouped form of AttendQ8_0, with
// AttendScalar's layout of q, scores and out): AttendQ8_0 head by head with the block dot kDot.
template <BlockDotQ8_0Fn kDot>
void AttendQ8_0Heads(const AttentionHead& head, int heads, const float* q, const BlockQ8_0* keys,
                     const BlockQ8_0* values, int64_t block_stride, int first, int last,
                     float* scores, float* out) {
  for (int g = 0; g < heads; ++g)
    AttendQ8_0(head, q + g * head.head_dim, keys, values, block_stride, first, last,
               scores + static_cast<int64_t>(g) * (last + 1), out + g * head.head_dim, kDot);
}
// The same with AVX-512 (attention_q8_0_avx512.cc): 16 positions at a time, each key block's
// integer dot by vpmaddwd, the values dequantized once per block of positions for all the
// heads. Equal to AttendQ8_0 up to summation order and 2 ulp in exp; head sizes that are not a
// multiple of 32 up to 256 go head by head through AttendQ8_0.
void AttendQ8_0Avx512(const AttentionHead& head, int heads, const float* q, const BlockQ8_0* keys,
                      const BlockQ8_0* values, int64_t block_stride, int first, int last,
                      float* scores, float* out);
// The same with AVX2 (attention_avx2.cc), 8 positions at a time.
void AttendQ8_0Avx2(const AttentionHead& head, int heads, const float* q, const BlockQ8_0* keys,
                    const BlockQ8_0* values, int64_t block_stride, int first, int last,
                    float* scores, float* out);

}  // namespace evald::kernels
