// std::vector whose storage starts on a 64-byte cache line. The SIMD kernels read rows of float
// caches with full-width loads; a load that straddles two lines costs two, and a large
// std::vector<float> from malloc starts 16 bytes past a page (measured on the Zen 5 host:
// attention over a KV cache 16 bytes off a line, 4.0 ns per head-position; aligned, 3.0).
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace evald {

template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};

  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}  // NOLINT: rebinding converts implicitly

  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, size_t) { ::operator delete(p, kAlignment); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};

template <typename T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace evald
