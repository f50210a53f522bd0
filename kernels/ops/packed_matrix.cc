#include "kernels/ops/packed_matrix.h"

#include "kernels/ops/kernel_table.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "kernels/ops/matvec.h"

namespace evald::kernels {

void PackedMatrix::Free::operator()(uint8_t* p) const {
  std::free(p);
}

Isa PackedLayoutFor(Isa isa) {
  return KernelTable::For(isa).packed_layout;
}

std::unique_ptr<PackedMatrix> PackedMatrix::Pack(const WeightMatrix& w, Isa isa) {
  const Isa layout = PackedLayoutFor(isa);
  if ((w.type != GgmlType::kQ8_0 && w.type != GgmlType::kQ4_0) || w.rows % kRows != 0 ||
      w.cols % kQK != 0 || w.rows <= 0 || layout == Isa::kScalar)
    return nullptr;
  auto p = std::unique_ptr<PackedMatrix>(new PackedMatrix);
  p->layout_ = layout;
  p->type_ = w.type;
  p->rows_ = w.rows;
  p->cols_ = w.cols;
  const int64_t blocks = p->blocks(), stride = p->block_stride();
  const size_t bytes = static_cast<size_t>(p->groups() * blocks * stride);
  // 2 MiB aligned and backed by huge pages where the kernel allows (madvise mode): streaming a
  // matrix then crosses no 4 KiB page boundary, where hardware prefetchers stop and TLB misses
  // begin (the file's own pages come from the page cache, often in large folios).
  constexpr size_t kHuge = 2u << 20;
  const size_t alloc = (bytes + kHuge - 1) / kHuge * kHuge;
  p->data_.reset(static_cast<uint8_t*>(std::aligned_alloc(kHuge, alloc)));
  if (!p->data_) return nullptr;
  (void)madvise(p->data_.get(), alloc, MADV_HUGEPAGE);
  const int q8_offset = PackedWeightOffset(w.type, layout);
  bool minus128 = false;  // a Q8_0 value the AVX2 kernels cannot multiply exactly
  for (int64_t g = 0; g < p->groups(); ++g) {
    for (int64_t b = 0; b < blocks; ++b) {
      uint8_t* out = p->data_.get() + (g * blocks + b) * stride;
      for (int r = 0; r < kRows; ++r) {
        const uint8_t* row = w.data + (g * kRows + r) * w.row_bytes;
        if (w.type == GgmlType::kQ8_0) {
          const BlockQ8_0& blk = reinterpret_cast<const BlockQ8_0*>(row)[b];
          for (int j = 0; j < 8; ++j)
            for (int k = 0; k < 4; ++k) {
              const int8_t v = blk.qs[4 * j + k];
              minus128 |= v == -128;
              out[j * 64 + r * 4 + k] = static_cast<uint8_t>(v + q8_offset);
            }
          std::memcpy(out + 512 + r * 2, &blk.d, 2);
        } else {
          const BlockQ4_0& blk = reinterpret_cast<const BlockQ4_0*>(row)[b];
          auto elem = [&](int i) { return i < 16 ? (blk.qs[i] & 0x0F) : (blk.qs[i - 16] >> 4); };
          for (int c = 0; c < 4; ++c)
            for (int k = 0; k < 4; ++k)
              out[c * 64 + r * 4 + k] =
                  static_cast<uint8_t>(elem(8 * c + k) | (elem(8 * c + 4 + k) << 4));
          std::memcpy(out + 256 + r * 2, &blk.d, 2);
        }
      }
    }
  }
  // Found while packing rather than by a pass of its own over the matrix beforehand.
  if (minus128 && layout == Isa::kAvx2) return nullptr;
  return p;
}

}  // namespace evald::kernels
