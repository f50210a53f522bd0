// A fork-join pool for splitting matrix rows across threads. Idle workers sleep on a condition
// variable and never spin: on small machines (and with more threads than free cores) spinning
// workers steal the cycles the decoding thread needs (llama.cpp's spinning pool drops from ~40
// to 3-8 tok/s with two threads on this kind of machine).
#pragma once

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
  // Calls fn(begin, end) over [0, n) in contiguous chunks, one per thread; returns when all are
  // done. The caller runs the first chunk itself.
  void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

 private:
  void WorkerMain(int index);

  std::vector<std::thread> workers_;
  Mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  const std::function<void(int64_t, int64_t)>* job_ GUARDED_BY(mu_) = nullptr;
  int64_t job_n_ GUARDED_BY(mu_) = 0;
  uint64_t generation_ GUARDED_BY(mu_) = 0;
  int pending_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
};

}  // namespace evald::kernels
