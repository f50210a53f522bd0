#include "kernels/ops/thread_pool.h"

namespace evald::kernels {

namespace {
// Chunk i of `parts` over [0, n).
std::pair<int64_t, int64_t> Chunk(int64_t n, int parts, int i) {
  return {n * i / parts, n * (i + 1) / parts};
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back(&ThreadPool::WorkerMain, this, i);
}

ThreadPool::~ThreadPool() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (workers_.empty() || n < 2) {
    fn(0, n);
    return;
  }
  {
    MutexLock lock(mu_);
    job_ = &fn;
    job_n_ = n;
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  work_cv_.notify_all();
  auto [begin, end] = Chunk(n, threads(), 0);
  fn(begin, end);
  WaitableLock lock(mu_);
  while (pending_ != 0) done_cv_.wait(lock.native());
  job_ = nullptr;
}

void ThreadPool::WorkerMain(int index) {
  uint64_t seen = 0;
  while (true) {
    const std::function<void(int64_t, int64_t)>* job;
    int64_t n;
    {
      WaitableLock lock(mu_);
      while (!stopping_ && generation_ == seen) work_cv_.wait(lock.native());
      if (stopping_) return;
      seen = generation_;
      job = job_;
      n = job_n_;
    }
    auto [begin, end] = Chunk(n, threads(), index);
    if (begin < end) (*job)(begin, end);
    {
      MutexLock lock(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
}

}  // namespace evald::kernels
