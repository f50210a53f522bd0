#include "sandbox/sandbox_pool.h"

namespace evald {

SandboxPool::SandboxPool(const SandboxOptions& options, int size, const CancelToken* cancel)
    : options_(options), size_(size < 1 ? 1 : size), cancel_(cancel) {}

SandboxPool::~SandboxPool() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  MutexLock start(start_mu_);
  for (auto& t : threads_) t.join();
}

Status SandboxPool::EnsureStarted() {
  MutexLock start(start_mu_);
  {
    MutexLock lock(mu_);
    if (launched_) return start_status_;
    launched_ = true;
  }
  for (int i = 0; i < size_; ++i) threads_.emplace_back(&SandboxPool::ThreadMain, this, i);
  WaitableLock lock(mu_);
  started_cv_.wait(lock.native(), [&]() NO_THREAD_SAFETY_ANALYSIS { return started_ == size_; });
  return start_status_;
}

bool SandboxPool::started() const {
  MutexLock lock(mu_);
  return launched_ && started_ == size_;
}

SandboxLayers SandboxPool::layers() const {
  MutexLock lock(mu_);
  return layers_;
}

void SandboxPool::Submit(Task task) {
  (void)EnsureStarted();  // a failed start is each task's to report
  {
    MutexLock lock(mu_);
    queue_.push_back(std::move(task));
  }
  work_cv_.notify_one();
}

void SandboxPool::Wait() {
  WaitableLock lock(mu_);
  idle_cv_.wait(lock.native(),
                [&]() NO_THREAD_SAFETY_ANALYSIS { return queue_.empty() && busy_ == 0; });
}

void SandboxPool::ThreadMain(int index) {
  SandboxWorker worker(options_, index);
  worker.set_cancel(cancel_);
  Status st = worker.Start();
  {
    MutexLock lock(mu_);
    if (!st.ok() && start_status_.ok()) start_status_ = st;
    if (st.ok() && index == 0) layers_ = worker.layers();
    ++started_;
  }
  started_cv_.notify_all();
  while (true) {
    Task task;
    {
      WaitableLock lock(mu_);
      work_cv_.wait(lock.native(),
                    [&]() NO_THREAD_SAFETY_ANALYSIS { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      task = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
    }
    task(worker);
    {
      MutexLock lock(mu_);
      --busy_;
    }
    idle_cv_.notify_all();
  }
}

}  // namespace evald
