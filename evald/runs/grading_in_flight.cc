#include "evald/runs/grading_in_flight.h"

#include <chrono>

#include "base/clock.h"
#include "evald/proto/records.pb.h"

namespace evald {

GradingInFlight::Attempt::~Attempt() {
  if (owner_ != nullptr) owner_->Release(alone_);
}

GradingInFlight::Attempt GradingInFlight::Begin(const std::string& key, const std::string& run_id,
                                                const std::string& problem, int index,
                                                std::string* why) {
  WaitableLock lock(mu_);
  v1::GradingInFlight record;
  // A record that cannot be read counts as none: the guard must never stop grading by itself.
  if (!store_->Get(Family::kInFlight, key, &record).ok()) record.Clear();
  if (record.attempts() >= kMaxAttempts) {
    *why = "evald stopped " + std::to_string(record.attempts()) +
           " times while grading this code (first seen as " + record.problem() + " #" +
           std::to_string(record.index()) + " of run " + record.run_id() +
           "); it is not simulated again";
    return Attempt(nullptr, false);
  }
  const bool suspect = record.attempts() > 0;
  if (suspect) {
    ++suspects_waiting_;
    while (running_ != 0) changed_.wait(lock.native());
    --suspects_waiting_;
    alone_running_ = true;
  } else {
    record.set_run_id(run_id);
    record.set_problem(problem);
    record.set_index(index);
    while (suspects_waiting_ != 0 || alone_running_) changed_.wait(lock.native());
  }
  ++running_;
  record.set_attempts(record.attempts() + 1);
  record.set_started_unix_ms(UnixMillis());
  (void)store_->Put(Family::kInFlight, key, record);
  return Attempt(this, suspect);
}

void GradingInFlight::Release(bool alone) {
  MutexLock lock(mu_);
  --running_;
  if (alone) alone_running_ = false;
  changed_.notify_all();
}

void GradingInFlight::Finish(const std::string& key, Store::Batch* batch) const {
  batch->Delete(Family::kInFlight, key);
}

void GradingInFlight::Abandon(const std::string& key) {
  auto batch = store_->NewBatch();
  Finish(key, &batch);
  (void)store_->Write(batch);
}

}  // namespace evald
