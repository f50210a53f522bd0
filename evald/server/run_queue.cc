#include "evald/server/run_queue.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "base/clock.h"
#include "evald/runs/stored_run.h"

namespace evald {

namespace {

bool Terminal(v1::RunState s) {
  return s == v1::SUCCEEDED || s == v1::FAILED || s == v1::CANCELLED;
}

StatusOr<v1::Run> LoadRun(const Store& store, const std::string& id) {
  v1::Run run;
  Status st = store.Get(Family::kRuns, id, &run);
  if (st.code() == Status::Code::kNotFound) return Status::NotFound("no run " + id);
  if (!st.ok()) return st;
  return run;
}

}  // namespace

RunQueue::RunQueue(Store* store, DatasetRegistry* datasets, QueueOptions options)
    : store_(store), datasets_(datasets), options_(std::move(options)), guard_(store) {}

RunQueue::~RunQueue() {
  Stop();
}

Status RunQueue::Start() {
  std::vector<v1::Run> interrupted;
  EVALD_RETURN_IF_ERROR(
      store_->Scan(Family::kRuns, "", [&](std::string_view, std::string_view value) {
        v1::Run run;
        if (run.ParseFromArray(value.data(), static_cast<int>(value.size())) &&
            !Terminal(run.state()))
          interrupted.push_back(std::move(run));
        return true;
      }));
  std::sort(interrupted.begin(), interrupted.end(),
            [](const v1::Run& a, const v1::Run& b) { return a.id() < b.id(); });
  {
    MutexLock lock(mu_);
    for (const auto& run : interrupted) {
      spdlog::info("resuming run {} ({} of {} samples graded)", run.id(), run.samples_done(),
                   run.samples_total());
      queue_.push_back(run.id());
    }
  }
  thread_ = std::thread(&RunQueue::Main, this);
  return Status::Ok();
}

void RunQueue::Stop() {
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    if (running_cancel_) running_cancel_->Stop();
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RunQueue::Enqueue(const std::string& run_id) {
  {
    MutexLock lock(mu_);
    queue_.push_back(run_id);
  }
  changed_.notify_all();
}

Status RunQueue::Resume(const std::string& id) {
  {
    MutexLock lock(mu_);  // read and requeued in one step (Delete takes the same lock)
    auto run = LoadRun(*store_, id);
    if (!run.ok()) return run.status();
    if (run->state() != v1::FAILED && run->state() != v1::CANCELLED)
      return Status::InvalidArgument("run " + id + " is " + v1::RunState_Name(run->state()) +
                                     "; only FAILED or CANCELLED runs resume");
    run->set_state(v1::QUEUED);
    run->set_state_reason("resumed");
    run->set_finished_unix_ms(0);
    EVALD_RETURN_IF_ERROR(store_->Put(Family::kRuns, id, *run));
    cancel_requested_.erase(id);
    queue_.push_back(id);
  }
  changed_.notify_all();
  return Status::Ok();
}

Status RunQueue::Cancel(const std::string& id, const std::string& reason) {
  auto run = LoadRun(*store_, id);
  if (!run.ok()) return run.status();
  if (Terminal(run->state()))
    return Status::InvalidArgument("run " + id + " already ended (" +
                                   v1::RunState_Name(run->state()) + ")");
  MutexLock lock(mu_);
  cancel_requested_[id] = reason;
  auto it = std::find(queue_.begin(), queue_.end(), id);
  if (it != queue_.end()) {
    queue_.erase(it);
    run->set_state(v1::CANCELLED);
    run->set_state_reason(reason.empty() ? "cancelled before it started" : reason);
    run->set_finished_unix_ms(UnixMillis());
    ++counters_.runs_cancelled;
    return store_->Put(Family::kRuns, id, *run);
  }
  if (running_ == id && running_cancel_) running_cancel_->Cancel();  // its cluster work too
  return Status::Ok();  // the pipeline notices and stops
}

StatusOr<int64_t> RunQueue::Delete(const std::string& id) {
  MutexLock lock(mu_);  // Resume and Cancel wait: the run cannot start again half deleted
  auto run = LoadRun(*store_, id);
  if (!run.ok()) return run.status();
  if (!Terminal(run->state()) || running_ == id ||
      std::find(queue_.begin(), queue_.end(), id) != queue_.end())
    return Status::InvalidArgument("run " + id + " is " + v1::RunState_Name(run->state()) +
                                   "; cancel it before deleting it");
  Store::Batch batch = store_->NewBatch();
  int64_t samples = 0;
  EVALD_RETURN_IF_ERROR(
      store_->Scan(Family::kSamples, id + "/", [&](std::string_view key, std::string_view) {
        batch.Delete(Family::kSamples, key);
        ++samples;
        return true;
      }));
  batch.Delete(Family::kRuns, id);
  EVALD_RETURN_IF_ERROR(store_->Write(batch));
  return samples;
}

int RunQueue::QueueDepth() const {
  MutexLock lock(mu_);
  return static_cast<int>(queue_.size()) + (running_.empty() ? 0 : 1);
}

void RunQueue::Main() {
  while (true) {
    std::string id;
    std::shared_ptr<CancelToken> cancel = std::make_shared<CancelToken>();
    {
      WaitableLock lock(mu_);
      changed_.wait(lock.native(),
                    [&]() NO_THREAD_SAFETY_ANALYSIS { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      id = queue_.front();
      queue_.pop_front();
      running_ = id;
      running_cancel_ = cancel;
      if (cancel_requested_.count(id)) cancel->Cancel();
    }
    Execute(id, *cancel);
    MutexLock lock(mu_);
    running_.clear();
    running_cancel_.reset();
  }
}

void RunQueue::Execute(const std::string& run_id, const CancelToken& cancel) {
  auto loaded = LoadRun(*store_, run_id);
  if (!loaded.ok()) {
    spdlog::error("run {} vanished: {}", run_id, loaded.status().ToString());
    return;
  }
  v1::Run run = std::move(*loaded);
  if (Terminal(run.state())) return;
  StoredRunContext context = ContextFor(run_id, cancel);
  auto task = ParseTask(run.spec().task());
  auto dataset = task.ok() ? datasets_->Find(run.spec().dataset(), *task) : task.status();
  if (!dataset.ok()) return Finish(&run, {v1::FAILED, dataset.status().ToString()}, context);
  context.dataset = *dataset;
  if (auto end = DriveStoredRun(&run, context)) Finish(&run, *end, context);
}

StoredRunContext RunQueue::ContextFor(const std::string& run_id, const CancelToken& cancel) {
  StoredRunContext context;
  context.store = store_;
  context.resources = options_.resources;
  context.resources.store = store_;
  context.resources.guard = &guard_;
  context.resources.cancel = &cancel;
  context.backend = options_.backend;
  context.counters = &counters_;
  context.write = [this, run_id](Store::Batch& batch) { return WriteDurably(batch, run_id); };
  return context;
}

bool RunQueue::WriteDurably(Store::Batch& batch, const std::string& run_id) {
  for (int attempt = 0;; ++attempt) {
    Status st = store_->Write(batch);
    if (st.ok()) {
      if (attempt > 0) spdlog::info("run {}: the store accepts writes again; going on", run_id);
      return true;
    }
    if (attempt == 0)
      spdlog::error("run {}: {}; the run waits until the store accepts writes", run_id,
                    st.ToString());
    WaitableLock lock(mu_);
    if (stopping_) return false;
    changed_.wait_for(lock.native(), std::chrono::seconds(1),
                      [&]() NO_THREAD_SAFETY_ANALYSIS { return stopping_; });
  }
}

void RunQueue::Finish(v1::Run* run, const RunEnd& ended, const StoredRunContext& context) {
  RunEnd end = ended;
  {
    // The run stops counting towards the queue depth before anyone can see it ended.
    MutexLock lock(mu_);
    if (running_ == run->id()) running_.clear();
    auto asked = cancel_requested_.find(run->id());
    if (asked != cancel_requested_.end()) {
      if (end.state == v1::CANCELLED && !asked->second.empty()) end.reason = asked->second;
      cancel_requested_.erase(asked);
    }
  }
  if (!FinishStoredRun(run, end, context))
    spdlog::error("run {}: stopped before its end could be stored", run->id());
  if (end.state == v1::SUCCEEDED) ++counters_.runs_succeeded;
  if (end.state == v1::FAILED) ++counters_.runs_failed;
  if (end.state == v1::CANCELLED) ++counters_.runs_cancelled;
  spdlog::info("run {} {}{}", run->id(), v1::RunState_Name(end.state),
               end.reason.empty() ? "" : ": " + end.reason);
}

}  // namespace evald
