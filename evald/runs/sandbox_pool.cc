#include "evald/runs/sandbox_pool.h"

namespace evald {

SandboxPool::SandboxPool(const SandboxOptions& options, int size)
    : options_(options), size_(size < 1 ? 1 : size) {}

SandboxPool::~SandboxPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

Status SandboxPool::Start() {
  for (int i = 0; i < size_; ++i) threads_.emplace_back(&SandboxPool::ThreadMain, this, i);
  std::unique_lock<std::mutex> lock(mu_);
  started_cv_.wait(lock, [&] { return started_ == size_; });
  return start_status_;
}

void SandboxPool::Submit(Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  work_cv_.notify_one();
}

void SandboxPool::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return queue_.empty() && busy_ == 0; });
}

void SandboxPool::ThreadMain(int index) {
  SandboxWorker worker(options_, index);
  Status st = worker.Start();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!st.ok() && start_status_.ok()) start_status_ = st;
    if (st.ok() && index == 0) layers_ = worker.layers();
    ++started_;
  }
  started_cv_.notify_all();
  while (true) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      task = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
    }
    task(worker);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --busy_;
    }
    idle_cv_.notify_all();
  }
}

}  // namespace evald
