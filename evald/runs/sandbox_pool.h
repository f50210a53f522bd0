// A fixed set of threads, each owning one sandbox worker for its whole life (the worker's init
// dies with the thread that started it), running submitted tasks in order of submission.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "sandbox/sandbox_worker.h"

namespace evald {

class SandboxPool {
 public:
  using Task = std::function<void(SandboxWorker&)>;

  SandboxPool(const SandboxOptions& options, int size);
  ~SandboxPool();
  SandboxPool(const SandboxPool&) = delete;
  SandboxPool& operator=(const SandboxPool&) = delete;

  // Starts every worker; fails with the first worker's error.
  Status Start();
  const SandboxLayers& layers() const { return layers_; }

  void Submit(Task task);
  // Blocks until every submitted task has finished.
  void Wait();

 private:
  void ThreadMain(int index);

  SandboxOptions options_;
  int size_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable work_cv_, idle_cv_, started_cv_;
  std::deque<Task> queue_;
  int busy_ = 0;
  int started_ = 0;
  bool stopping_ = false;
  Status start_status_;
  SandboxLayers layers_;
};

}  // namespace evald
