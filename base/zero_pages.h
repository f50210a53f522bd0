// A fixed-size array of zeros on fresh anonymous pages, for large buffers that are mostly never
// written. Nothing is written at allocation (a std::vector writes every element), so the
// kernel commits a page only when something first writes to it; reading an unwritten page
// reads zeros without committing it. A KV cache sized for every position of n samples then
// costs memory only for the rows the samples actually reach, and not for the shared prompt's
// rows that samples 2..n read from sample 1. Pages are 4 KiB-aligned, so cache-line-aligned.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace evald {

template <typename T>
class ZeroPages {
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>,
                "zero bytes must be a valid T and nothing may need destroying");

 public:
  ZeroPages() = default;
  // `count` zero elements; throws std::bad_alloc where the address space is not there.
  explicit ZeroPages(size_t count) : size_(count) {
    if (count == 0) return;
    // No swap reserved for the whole: what is committed is what is written, and callers check
    // that against the memory there is (kernels' CheckSessionMemory) before they write.
    void* p = mmap(nullptr, Bytes(), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    // Pages of 4 KiB, also where transparent huge pages are on for every mapping: a huge page
    // would commit 2 MiB around the first row written (a whole sequence's block of a cache).
    madvise(p, Bytes(), MADV_NOHUGEPAGE);
    data_ = static_cast<T*>(p);
  }
  ZeroPages(ZeroPages&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  ZeroPages& operator=(ZeroPages&& other) noexcept {
    if (this != &other) {
      Release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ZeroPages(const ZeroPages&) = delete;
  ZeroPages& operator=(const ZeroPages&) = delete;
  ~ZeroPages() { Release(); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  size_t size() const { return size_; }
  // Bytes of the pages committed so far (mincore): those something has written to.
  size_t ResidentBytes() const {
    if (!data_) return 0;
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> resident((Bytes() + page - 1) / page);
    if (mincore(data_, Bytes(), resident.data()) != 0) return Bytes();  // cannot tell: all
    size_t pages = 0;
    for (unsigned char r : resident) pages += r & 1;
    return pages * page;
  }

 private:
  size_t Bytes() const { return size_ * sizeof(T); }
  void Release() {
    if (data_) munmap(data_, Bytes());
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace evald
