// The daemon's guard against crash loops: before a simulation starts, its verdict key is
// recorded in the store with an attempt count; the record leaves in the same batch as the verdict.
// A record found at the next attempt means the process died while grading that code. After
// kMaxAttempts such deaths the code is not simulated again: its samples get '!' with the reason,
// and every other sample of the run is graded, so a supervisor restarting the daemon always gets
// the run to its end. A suspect (a code that was in flight when the process died) is retried
// alone, with no other simulation beside it: whatever else was in flight at a death is not
// blamed for it a second time.
#pragma once

#include <condition_variable>
#include <string>

#include "base/thread_annotations.h"
#include "evald/store/store.h"

namespace evald {

class GradingInFlight {
 public:
  static constexpr int kMaxAttempts = 2;

  explicit GradingInFlight(Store* store) : store_(store) {}

  // One attempt at grading a code; holds the right to simulate (shared, or exclusive for a
  // suspect) until destroyed.
  class Attempt {
   public:
    Attempt(Attempt&& other) noexcept : owner_(other.owner_), alone_(other.alone_) {
      other.owner_ = nullptr;
    }
    Attempt& operator=(Attempt&&) = delete;
    ~Attempt();
    bool allowed() const { return owner_ != nullptr; }

   private:
    friend class GradingInFlight;
    Attempt(GradingInFlight* owner, bool alone) : owner_(owner), alone_(alone) {}
    GradingInFlight* owner_;
    bool alone_;
  };

  // Records one more attempt at `key` and waits for the right to simulate. Not allowed when
  // kMaxAttempts earlier attempts died: then `*why` says so and nothing is recorded.
  Attempt Begin(const std::string& key, const std::string& run_id, const std::string& problem,
                int index, std::string* why) EXCLUDES(mu_);

  // The attempt ended (with a verdict, or a failure the process survived).
  void Finish(const std::string& key, Store::Batch* batch) const;
  void Abandon(const std::string& key);

 private:
  void Release(bool alone) EXCLUDES(mu_);

  Store* store_;
  Mutex mu_;  // one read-modify-write of a record at a time; guards the counts below
  std::condition_variable changed_;
  int running_ GUARDED_BY(mu_) = 0;           // simulations under way
  int suspects_waiting_ GUARDED_BY(mu_) = 0;  // suspects waiting to run alone (others wait)
  bool alone_running_ GUARDED_BY(mu_) = false;
};

}  // namespace evald
