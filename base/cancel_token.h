// One way to tell long work to end, passed the same way everywhere (a `const CancelToken&`):
// sampling backends, the grading session, a cluster dispatch and the run queue all look at it.
// Two strengths: Stop() ends the work as soon as it can and leaves what was sent elsewhere to a
// later resumption (the process is stopping); Cancel() also withdraws that (the run itself is
// cancelled: a cluster's array is scancel'ed). Thread-safe; a token is never un-stopped, so
// each run gets a fresh one.
#pragma once

#include <atomic>

namespace evald {

class CancelToken {
 public:
  void Stop() {
    int running = kRunning;
    state_.compare_exchange_strong(running, kStopped);  // a cancelled token stays cancelled
  }
  void Cancel() { state_.store(kCancelled); }
  // Either: no new work should start.
  bool stopped() const { return state_.load() != kRunning; }
  // The work itself was cancelled (not only the process stopping).
  bool cancelled() const { return state_.load() == kCancelled; }

 private:
  static constexpr int kRunning = 0, kStopped = 1, kCancelled = 2;
  std::atomic<int> state_{kRunning};
};

}  // namespace evald
