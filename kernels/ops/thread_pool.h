// A fork-join pool for splitting matrix rows (and other independent items) across threads.
//
// Work is handed out in pieces from one atomic counter rather than one fixed chunk per thread:
// the caller starts on the first pieces at once, and a worker that wakes late takes what is
// left instead of holding the caller up with a whole chunk still to do. A worker that has
// finished waits a short, bounded while for the next call (decoding calls the pool a few hundred
// times per token, microseconds apart), then sleeps on a condition variable: it never spins for
// long, since on small machines, and with more threads than free cores, spinning workers steal
// the cycles the decoding thread needs (llama.cpp's spinning pool drops from ~40 to 3-8 tok/s
// with two threads on this kind of machine).
//
// Which thread computes an item never changes its result: callers give items that are computed
// independently, so a split by time is as deterministic as a split by thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "base/thread_annotations.h"

namespace evald::kernels {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // total threads, the caller's included
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Calls fn(begin, end) over [0, n) (not at all when n <= 0) in contiguous pieces whose bounds are
  // multiples of `align` (but the last), about eight per thread, each piece once; returns when all
  // are done. The caller works on pieces too.
  void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t align = 1);

 private:
  // The current call: generation in the high 32 bits, pieces not yet claimed in the low 32.
  static uint64_t Word(uint64_t generation, uint64_t left) { return generation << 32 | left; }
  // Claims and runs pieces of `generation` until none is left or another call has begun.
  void RunPieces(uint64_t generation);
  // Waits (briefly spinning, then asleep) for a generation other than `seen`; 0 when stopping.
  uint64_t AwaitGeneration(uint64_t seen);
  void WorkerMain();

  std::vector<std::thread> workers_;
  // Set by the caller before it publishes a generation in word_; read by a worker only after
  // claiming a piece of that generation, when the call cannot end before the piece is done.
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  std::atomic<int64_t> n_{0}, piece_size_{1};
  std::atomic<uint32_t> pieces_{0};
  std::atomic<uint64_t> word_{0};
  std::atomic<uint32_t> done_{0};  // pieces of the current call finished
  Mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  int sleeping_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
};

}  // namespace evald::kernels
