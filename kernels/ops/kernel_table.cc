#include "kernels/ops/kernel_table.h"

#include "kernels/ops/activations.h"
#include "kernels/ops/dot.h"
#include "kernels/ops/packed_matrix.h"
#include "kernels/quant/kquants.h"

namespace evald::kernels {

namespace {

// A typed row dot as a table entry.
template <typename Block, float (*Dot)(const Block*, const BlockQ8_0*, int64_t)>
float RowQ8(const uint8_t* row, const BlockQ8_0* x, int64_t n) {
  return Dot(reinterpret_cast<const Block*>(row), x, n);
}

template <typename Element, float (*Dot)(const Element*, const float*, int64_t)>
float RowF32(const uint8_t* row, const float* x, int64_t n) {
  return Dot(reinterpret_cast<const Element*>(row), x, n);
}

template <typename Block, void (*Dot)(const Block*, const BlockQ8_0* const*, const float* const*,
                                      int, int64_t, float*)>
void RowQ8Multi(const uint8_t* row, const BlockQ8_0* const* xs, const float* const* x_scales,
                int nv, int64_t n, float* out) {
  Dot(reinterpret_cast<const Block*>(row), xs, x_scales, nv, n, out);
}

void SetType(KernelTable& t, GgmlType type, TypeKernels k) {
  t.types[static_cast<size_t>(type)] = k;
}

// The scalar oracles: every entry, the base of every other table.
KernelTable Scalar() {
  KernelTable t;
  t.isa = Isa::kScalar;
  SetType(t, GgmlType::kF32, {nullptr, &RowF32<float, DotF32>});
  SetType(t, GgmlType::kF16, {nullptr, &RowF32<uint16_t, DotF16>});
  SetType(t, GgmlType::kBF16, {nullptr, &RowF32<uint16_t, DotBF16>});
  SetType(t, GgmlType::kQ8_0, {&RowQ8<BlockQ8_0, DotQ8_0Scalar>});
  SetType(t, GgmlType::kQ4_0, {&RowQ8<BlockQ4_0, DotQ4_0Scalar>});
  SetType(t, GgmlType::kQ4_K, {&RowQ8<BlockQ4_K, DotQ4_KScalar>});
  SetType(t, GgmlType::kQ6_K, {&RowQ8<BlockQ6_K, DotQ6_KScalar>});
  t.attend_q8_0 = &AttendQ8_0Heads<&DotQ8_0Scalar>;
  t.shared_scores_q8_0 = &SharedScoresQ8_0Heads<&DotQ8_0Scalar>;
  t.attend = &AttendScalar;
  t.shared_scores = &SharedScoresScalar;
  t.rms_norm = &RmsNormScalar;
  t.gated_silu = &GatedSiluScalar;
  t.softmax_weights = &SoftmaxWeightsScalar;
  return t;
}

KernelTable Avx2() {
  KernelTable t = Scalar();
  t.isa = Isa::kAvx2;
  SetType(t, GgmlType::kQ8_0, {&RowQ8<BlockQ8_0, DotQ8_0Avx2>});
  SetType(t, GgmlType::kQ4_0, {&RowQ8<BlockQ4_0, DotQ4_0Avx2>});
  SetType(t, GgmlType::kQ4_K, {&RowQ8<BlockQ4_K, DotQ4_KAvx2>});
  SetType(t, GgmlType::kQ6_K, {&RowQ8<BlockQ6_K, DotQ6_KAvx2>});
  t.attend_q8_0 = &AttendQ8_0Avx2;
  t.shared_scores_q8_0 = nullptr;  // none written for AttendQ8_0Avx2's additions
  t.attend = &AttendAvx2;
  t.shared_scores = nullptr;  // AttendAvx2's additions are not the scalar path's
  t.rms_norm = &RmsNormAvx2;
  t.gated_silu = &GatedSiluAvx2;
  t.softmax_weights = &SoftmaxWeightsAvx2;
  t.packed_layout = Isa::kAvx2;
  t.packed_matvec = &PackedMatVecAvx2;
  return t;
}

// AVX-VNNI CPUs: VNNI for the plain blocks and the packed batches (in the AVX2 layout), AVX2 for
// the rest (the K-quants, a packed single vector).
KernelTable AvxVnni() {
  KernelTable t = Avx2();
  t.isa = Isa::kAvxVnni;
  SetType(t, GgmlType::kQ8_0, {&RowQ8<BlockQ8_0, DotQ8_0AvxVnni>});
  SetType(t, GgmlType::kQ4_0, {&RowQ8<BlockQ4_0, DotQ4_0AvxVnni>});
  t.packed_matvec = &PackedMatVecAvxVnni;
  return t;
}

KernelTable Avx512Vnni() {
  KernelTable t = Avx2();
  t.isa = Isa::kAvx512Vnni;
  SetType(t, GgmlType::kQ8_0,
          {&RowQ8<BlockQ8_0, DotQ8_0Avx512Vnni>, nullptr,
           &RowQ8Multi<BlockQ8_0, DotQ8_0MultiAvx512Vnni>});
  SetType(t, GgmlType::kQ4_0,
          {&RowQ8<BlockQ4_0, DotQ4_0Avx512Vnni>, nullptr,
           &RowQ8Multi<BlockQ4_0, DotQ4_0MultiAvx512Vnni>});
  t.attend = &AttendAvx512;
  t.shared_scores = &SharedScoresAvx512;
  t.attend_q8_0 = &AttendQ8_0Avx512;
  t.shared_scores_q8_0 = &SharedScoresQ8_0Avx512;
  t.rms_norm = &RmsNormAvx512;
  t.gated_silu = &GatedSiluAvx512;
  t.softmax_weights = &SoftmaxWeightsAvx512;
  t.packed_layout = Isa::kAvx512Vnni;
  t.packed_matvec = &PackedMatVecAvx512Vnni;
  return t;
}

}  // namespace

const KernelTable& KernelTable::For(Isa isa) {
  static const KernelTable kScalar = Scalar(), kAvx2 = Avx2(), kAvxVnni = AvxVnni(),
                           kAvx512Vnni = Avx512Vnni();
  switch (isa) {
    case Isa::kAvx2:
      return kAvx2;
    case Isa::kAvxVnni:
      return kAvxVnni;
    case Isa::kAvx512Vnni:
      return kAvx512Vnni;
    default:
      return kScalar;
  }
}

}  // namespace evald::kernels
