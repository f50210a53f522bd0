#include "evald/cluster/slurm_dispatch.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/file_io.h"

namespace evald {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxSubmitFailures = 3;
constexpr size_t kMaxJobsPerArray = 20000;

std::string ShellQuoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string ThisExecutable() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "evald";
}

std::string TaskName(const std::string& job_id, int index) {
  return job_id + "_" + std::to_string(index);
}

}  // namespace

SlurmDispatcher::SlurmDispatcher(SlurmDispatchOptions options, v1::WorkerSpec spec,
                                 const CancelToken* cancel)
    : options_(std::move(options)),
      spec_(std::move(spec)),
      cancel_(cancel),
      spool_(options_.spool),
      slurm_(options_.slurm_bin_dir) {
  if (options_.worker_binary.empty()) options_.worker_binary = ThisExecutable();
  options_.max_tasks = std::clamp(options_.max_tasks, 1, 100000);
  options_.jobs_per_task = std::max(1, options_.jobs_per_task);
  options_.poll_ms = std::clamp(options_.poll_ms, 50, 600000);
}

SlurmDispatcher::~SlurmDispatcher() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  drained_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  const DispatchCounters& c = counters_;
  if (c.arrays > 0 || c.jobs_adopted > 0 || c.results_ingested > 0)
    spdlog::info(
        "slurm: {} grading job(s) sent in {} array(s) of {} task(s) ({} task(s) resubmitted), {} "
        "followed from an earlier process, {} result(s) read, {} given up",
        c.jobs_sent.load(), c.arrays.load(), c.tasks.load(), c.resubmitted_tasks.load(),
        c.jobs_adopted.load(), c.results_ingested.load(), c.jobs_failed.load());
}

Status SlurmDispatcher::Start() {
  EVALD_RETURN_IF_ERROR(spool_.Prepare().Annotate("the spool"));
  EVALD_RETURN_IF_ERROR(slurm_.Check());
  spool_.CollectGarbage(7 * 24 * 3600.0);
  thread_ = std::thread(&SlurmDispatcher::Loop, this);
  return Status::Ok();
}

void SlurmDispatcher::Submit(v1::WorkerJob job, Done done) {
  const std::string key = job.key();
  {
    MutexLock lock(mu_);
    if (jobs_.count(key)) {  // already followed: one more caller for its result
      waiting_[key].push_back(std::move(done));
      return;
    }
  }
  auto earlier = spool_.ReadResult(key);
  if (earlier.ok() && earlier->has_value()) {  // graded by an array this process did not see end
    ++counters_.results_ingested;
    done(std::move(**earlier));
    spool_.RemoveResult(key);
    spool_.RemovePending(key);
    return;
  }
  MutexLock lock(mu_);
  if (std::optional<PendingMark> mark = spool_.ReadPending(key)) {
    auto it = std::find_if(tasks_.begin(), tasks_.end(), [&](const Task& t) {
      return t.job_id == mark->job_id && t.index == mark->index;
    });
    if (it == tasks_.end())
      it = tasks_.insert(tasks_.end(), {mark->job_id, mark->index, mark->attempt, {}});
    it->keys.push_back(key);
    ++counters_.jobs_adopted;
  } else {
    if (gathered_.empty()) first_gathered_ = Clock::now();
    gathered_.push_back(key);
  }
  jobs_[key] = std::move(job);
  waiting_[key].push_back(std::move(done));
  cv_.notify_all();
}

void SlurmDispatcher::Drain() {
  WaitableLock lock(mu_);
  drain_ = true;
  cv_.notify_all();
  while (!jobs_.empty() && !aborted_ && !stop_) drained_cv_.wait(lock.native());
  drain_ = false;
}

void SlurmDispatcher::Loop() {
  WaitableLock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock.native(), std::chrono::milliseconds(options_.poll_ms));
    if (stop_) break;
    if (!aborted_ && cancel_ != nullptr && cancel_->stopped()) {
      aborted_ = true;
      if (cancel_->cancelled()) CancelArrays();
      jobs_.clear();  // their callbacks never run, as with local work not yet started
      waiting_.clear();
      gathered_.clear();
      tasks_.clear();
    }
    if (aborted_) {
      drained_cv_.notify_all();
      continue;
    }
    // A bound on one submission's shards; below it, jobs gather for batch_delay_ms.
    const bool full = gathered_.size() >= kMaxJobsPerArray;
    if (!gathered_.empty() &&
        (drain_ || full ||
         Clock::now() - first_gathered_ >= std::chrono::milliseconds(options_.batch_delay_ms)))
      SubmitGathered();
    if (!tasks_.empty()) Poll();
    if (jobs_.empty()) drained_cv_.notify_all();
  }
}

void SlurmDispatcher::SubmitGathered() {
  std::vector<std::string> keys = std::move(gathered_);
  gathered_.clear();
  const size_t tasks = std::min<size_t>(
      options_.max_tasks, (keys.size() + options_.jobs_per_task - 1) / options_.jobs_per_task);
  std::vector<std::vector<std::string>> shards(tasks);
  for (size_t i = 0; i < keys.size(); ++i) shards[i * tasks / keys.size()].push_back(keys[i]);
  mu_.unlock();
  Status st = SubmitArray(shards, 1);
  mu_.lock();
  if (st.ok()) {
    submit_failures_ = 0;
    return;
  }
  spdlog::warn("slurm: submitting {} grading jobs: {}", keys.size(), st.ToString());
  if (++submit_failures_ < kMaxSubmitFailures) {  // tried again at the next poll
    gathered_.insert(gathered_.end(), keys.begin(), keys.end());
    first_gathered_ = Clock::now();
    return;
  }
  Answers answers;
  for (const std::string& key : keys) Answer(key, st.Annotate("slurm"), &answers);
  mu_.unlock();
  Deliver(answers);
  mu_.lock();
}

Status SlurmDispatcher::SubmitArray(const std::vector<std::vector<std::string>>& shards,
                                    int attempt) {
  auto batch = spool_.NewBatch();
  if (!batch.ok()) return batch.status();
  std::vector<std::string> paths;
  for (size_t i = 0; i < shards.size(); ++i) {
    v1::WorkerShard shard;
    *shard.mutable_spec() = spec_;
    {
      MutexLock lock(mu_);
      for (const std::string& key : shards[i])
        if (auto it = jobs_.find(key); it != jobs_.end()) *shard.add_jobs() = it->second;
    }
    paths.push_back(*batch + "/task_" + std::to_string(i) + ".shard");
    EVALD_RETURN_IF_ERROR(spool_.WriteShard(paths.back(), shard));
  }
  const std::string task_list = *batch + "/tasks", script = *batch + "/run.sh";
  EVALD_RETURN_IF_ERROR(spool_.WriteTaskList(task_list, paths));
  EVALD_RETURN_IF_ERROR(WriteFileAtomic(
      script, "#!/bin/sh\n# evald grading array (docs/scale-out.md)\nexec " +
                  ShellQuoted(options_.worker_binary) + " worker --spool " +
                  ShellQuoted(options_.spool) + " --task-list " + ShellQuoted(task_list) + "\n"));
  ::chmod(script.c_str(), 0755);
  auto job_id = slurm_.SubmitArray(script, static_cast<int>(paths.size()), spool_.LogPattern(),
                                   options_.submit);
  if (!job_id.ok()) return job_id.status();
  size_t jobs = 0;
  for (size_t i = 0; i < shards.size(); ++i) {
    for (const std::string& key : shards[i])
      (void)spool_.WritePending(key, {*job_id, static_cast<int>(i), attempt});
    jobs += shards[i].size();
  }
  spdlog::info("slurm: array {} submitted: {} task(s), {} grading job(s){}", *job_id, shards.size(),
               jobs, attempt > 1 ? " (again)" : "");
  MutexLock lock(mu_);
  ++counters_.arrays;
  counters_.tasks += static_cast<int>(shards.size());
  counters_.jobs_sent += static_cast<int>(jobs);
  for (size_t i = 0; i < shards.size(); ++i)
    tasks_.push_back({*job_id, static_cast<int>(i), attempt, shards[i]});
  batches_[*job_id] = {*batch, static_cast<int>(shards.size())};
  return Status::Ok();
}

void SlurmDispatcher::TaskEnded(const Task& task) {
  auto it = batches_.find(task.job_id);
  if (it == batches_.end() || --it->second.second > 0) return;
  std::error_code ec;
  std::filesystem::remove_all(it->second.first, ec);
  batches_.erase(it);
}

void SlurmDispatcher::Answer(const std::string& key, StatusOr<v1::WorkerResult> result,
                             Answers* answers) {
  auto it = waiting_.find(key);
  if (it != waiting_.end()) {
    for (Done& done : it->second) answers->calls.emplace_back(std::move(done), result);
    waiting_.erase(it);
  }
  jobs_.erase(key);
  answers->keys.push_back(key);
}

void SlurmDispatcher::Deliver(Answers& answers) {
  for (auto& [done, result] : answers.calls) done(std::move(result));
  // Only now, with every caller done with it (a daemon has stored the verdict), is the result
  // no longer needed by a restart.
  for (const std::string& key : answers.keys) {
    spool_.RemoveResult(key);
    spool_.RemovePending(key);
  }
}

bool SlurmDispatcher::Collect(Task& task, Answers* answers) {
  std::vector<std::string> missing;
  for (const std::string& key : task.keys) {
    if (!jobs_.count(key)) continue;  // answered through another task
    auto r = spool_.ReadResult(key);
    if (r.ok() && !r->has_value()) {
      missing.push_back(key);
      continue;
    }
    if (r.ok()) ++counters_.results_ingested;
    Answer(key, r.ok() ? StatusOr<v1::WorkerResult>(std::move(**r)) : r.status(), answers);
  }
  task.keys = std::move(missing);
  return task.keys.empty();
}

std::string SlurmDispatcher::LogTail(const Task& task) const {
  auto text = ReadFileBounded(spool_.LogPath(task.job_id, task.index), 1u << 20);
  if (!text.ok()) return "no log";
  std::string s = *text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  s = s.substr(s.rfind('\n') == std::string::npos ? 0 : s.rfind('\n') + 1);
  return s.empty() ? "an empty log" : "its log ends: " + s.substr(0, 300);
}

void SlurmDispatcher::Poll() {
  std::set<std::string> job_ids;
  for (const Task& t : tasks_) job_ids.insert(t.job_id);
  mu_.unlock();
  auto live = slurm_.LiveTasks(job_ids);
  mu_.lock();
  if (!live.ok()) {
    spdlog::warn("slurm: {} (following the arrays again at the next poll)",
                 live.status().ToString());
    return;
  }
  Answers answers;
  std::vector<std::vector<std::string>> again;
  int again_attempt = 1;
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    Task& task = *it;
    if (Collect(task, &answers) || !live->count(TaskName(task.job_id, task.index))) {
      if (!task.keys.empty()) {  // ended without all of its results
        const std::string why =
            fmt::format("slurm array task {} ended without {} result(s); {}",
                        TaskName(task.job_id, task.index), task.keys.size(), LogTail(task));
        if (task.attempt <= options_.max_resubmits) {
          spdlog::warn("{}: submitting it again (attempt {} of {})", why, task.attempt + 1,
                       options_.max_resubmits + 1);
          again.push_back(std::move(task.keys));
          again_attempt = std::max(again_attempt, task.attempt + 1);
          ++counters_.resubmitted_tasks;
        } else {
          spdlog::error("{}: giving up after {} attempts", why, task.attempt);
          for (const std::string& key : task.keys) {
            ++counters_.jobs_failed;
            Answer(key,
                   Status::Unavailable(fmt::format("{} (after {} attempts)", why, task.attempt)),
                   &answers);
          }
        }
      }
      TaskEnded(task);
      it = tasks_.erase(it);
    } else {
      ++it;
    }
  }
  mu_.unlock();
  Deliver(answers);
  Status st = again.empty() ? Status::Ok() : SubmitArray(again, again_attempt);
  mu_.lock();
  if (!st.ok()) {  // gathered again: the next poll submits them with the new jobs
    spdlog::warn("slurm: resubmitting: {}", st.ToString());
    if (gathered_.empty()) first_gathered_ = Clock::now();
    for (auto& keys : again) gathered_.insert(gathered_.end(), keys.begin(), keys.end());
  }
}

void SlurmDispatcher::CancelArrays() {
  std::set<std::string> job_ids;
  for (const Task& t : tasks_) job_ids.insert(t.job_id);
  for (const std::string& id : job_ids) {
    if (Status st = slurm_.Cancel(id); !st.ok())
      spdlog::warn("slurm: cancelling array {}: {}", id, st.ToString());
    else
      spdlog::info("slurm: array {} cancelled with its run", id);
  }
  for (const Task& t : tasks_)
    for (const std::string& key : t.keys) spool_.RemovePending(key);
}

}  // namespace evald
