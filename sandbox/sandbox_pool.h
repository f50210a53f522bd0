// A fixed set of threads, each owning one sandbox worker for its whole life (the worker's init
// dies with the thread that started it), running submitted tasks in order of submission. The
// threads and their sandboxes start when first needed (EnsureStarted, or the first Submit): a
// run that every cache answers starts none.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "base/thread_annotations.h"
#include "sandbox/sandbox_worker.h"

namespace evald {

class SandboxPool {
 public:
  using Task = std::function<void(SandboxWorker&)>;

  // `cancel` (optional): every worker's jobs end once it stops (SandboxWorker::set_cancel).
  SandboxPool(const SandboxOptions& options, int size, const CancelToken* cancel = nullptr);
  ~SandboxPool();
  SandboxPool(const SandboxPool&) = delete;
  SandboxPool& operator=(const SandboxPool&) = delete;

  // Starts every worker once; fails with the first worker's error (a worker whose start failed
  // still takes tasks: its sandbox is tried again for each, and their jobs fail with the
  // reason). Later calls return the first call's answer.
  Status EnsureStarted() EXCLUDES(mu_);
  bool started() const EXCLUDES(mu_);
  // The layers the sandbox got (valid once started).
  SandboxLayers layers() const EXCLUDES(mu_);

  void Submit(Task task) EXCLUDES(mu_);
  // Blocks until every submitted task has finished.
  void Wait() EXCLUDES(mu_);

 private:
  void ThreadMain(int index) EXCLUDES(mu_);

  const SandboxOptions options_;
  const int size_;
  const CancelToken* const cancel_;
  Mutex start_mu_;  // one start at a time
  std::vector<std::thread> threads_ GUARDED_BY(start_mu_);
  mutable Mutex mu_;
  std::condition_variable work_cv_, idle_cv_, started_cv_;
  std::deque<Task> queue_ GUARDED_BY(mu_);
  int busy_ GUARDED_BY(mu_) = 0;
  int started_ GUARDED_BY(mu_) = 0;
  bool launched_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  Status start_status_ GUARDED_BY(mu_);
  SandboxLayers layers_ GUARDED_BY(mu_);
};

}  // namespace evald
