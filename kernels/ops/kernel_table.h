// The functions one session computes with, picked once from a table per instruction set (as
// ggml-cpu's type traits pick a vec_dot per type): for each weight type, how a row meets the
// activations; and the attention over a float and over a Q8_0 KV cache, the FFN activation and
// the packed mat-vec kernels. MatVec, the attention and the model call through the table and
// never switch on the instruction set.
#pragma once

#include <array>
#include <cstdint>

#include "kernels/gguf/ggml_types.h"
#include "kernels/ops/activations.h"
#include "kernels/ops/attention.h"
#include "kernels/ops/isa.h"
#include "kernels/quant/blocks.h"

namespace evald::kernels {

class PackedMatrix;
struct PackedActivations;

// A weight row of `n` elements (bytes as stored) against activations quantized to Q8_0 ...
using RowDotQ8Fn = float (*)(const uint8_t* row, const BlockQ8_0* x, int64_t n);
// ... or against float activations.
using RowDotF32Fn = float (*)(const uint8_t* row, const float* x, int64_t n);
// One row against nv <= 8 Q8_0 vectors (x_scales: their block scales as floats).
using RowDotQ8MultiFn = void (*)(const uint8_t* row, const BlockQ8_0* const* xs,
                                 const float* const* x_scales, int nv, int64_t n, float* out);
using GatedSiluFn = void (*)(float* gate, const float* up, int64_t n);
using PackedMatVecFn = void (*)(const PackedMatrix& w, const PackedActivations& a, int64_t g_begin,
                                int64_t g_end, float* y);

// How a row of one weight type is multiplied: exactly one of dot_q8 (the activations are
// quantized to Q8_0 first) and dot_f32 is set.
struct TypeKernels {
  RowDotQ8Fn dot_q8 = nullptr;
  RowDotF32Fn dot_f32 = nullptr;
  RowDotQ8MultiFn dot_q8_multi = nullptr;  // optional: a row read once for several vectors
};

struct KernelTable {
  // The table of `isa` (built once; `isa` must be one this CPU runs, IsaSupported).
  static const KernelTable& For(Isa isa);

  // The kernels of a weight type (types the model loader refuses are not here: F32's).
  const TypeKernels& Row(GgmlType type) const {
    const auto i = static_cast<size_t>(type);
    return i < types.size() && (types[i].dot_q8 || types[i].dot_f32) ? types[i] : types[0];
  }

  Isa isa = Isa::kScalar;
  std::array<TypeKernels, 32> types{};  // by GgmlType's value
  AttendFn attend = nullptr;            // over a float KV cache
  // Scores bit for bit equal to `attend`'s, for many heads at once; nullptr where this ISA has
  // none (AVX2: every score goes through `attend`).
  SharedScoresFn shared_scores = nullptr;
  AttendQ8_0Fn attend_q8_0 = nullptr;  // over a Q8_0 KV cache
  // Scores bit for bit equal to `attend_q8_0`'s, for many heads at once; nullptr where none.
  SharedScoresQ8_0Fn shared_scores_q8_0 = nullptr;
  RmsNormFn rms_norm = nullptr;
  GatedSiluFn gated_silu = nullptr;
  SoftmaxWeightsFn softmax_weights = nullptr;  // the sampler's
  // The layout the packed kernels of this ISA read (kScalar: none) and their mat-vec.
  Isa packed_layout = Isa::kScalar;
  PackedMatVecFn packed_matvec = nullptr;
};

}  // namespace evald::kernels
