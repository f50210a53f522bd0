// Grading jobs sent to a Slurm cluster: the jobs a session cannot answer from its caches are
// gathered into shards in the spool, submitted as one job array, followed with squeue, and their
// results read back once each. An array task that ends without its results (cancelled, killed,
// its node lost) is submitted again, at most `max_resubmits` times, then its jobs are answered
// with the reason. A job already in flight in an array (a marker in the spool: a daemon restarted
// while its array ran) is followed rather than submitted again.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/cancel_token.h"
#include "base/status.h"
#include "base/thread_annotations.h"
#include "evald/cluster/slurm_client.h"
#include "evald/cluster/spool.h"
#include "evald/proto/worker.pb.h"

namespace evald {

struct SlurmDispatchOptions {
  std::string spool;  // shared with the workers (same path on every node)
  SlurmSubmitOptions submit;
  int max_tasks = 32;         // array tasks per submission
  int jobs_per_task = 4;      // fewer jobs than max_tasks * this: fewer tasks
  int max_resubmits = 2;      // per array task that ended without its results
  int poll_ms = 2000;         // squeue and the spool are read this often
  int batch_delay_ms = 1000;  // jobs gathered this long (or up to 20000) before a submission
  std::string worker_binary;  // evald on the nodes (default: this executable's path)
  std::string slurm_bin_dir;  // sbatch/squeue/scancel (default: PATH)
};

struct DispatchCounters {
  std::atomic<int> arrays{0}, tasks{0}, resubmitted_tasks{0}, jobs_sent{0}, jobs_adopted{0},
      results_ingested{0}, jobs_failed{0};
};

class SlurmDispatcher {
 public:
  // The job's result, or why it has none (its task was lost too often, a corrupt result).
  using Done = std::function<void(StatusOr<v1::WorkerResult>)>;

  // `cancel` stopped: stop following jobs (their callbacks never run); cancelled, the arrays
  // are cancelled too (a run cancelled, not a daemon stopping: a restart adopts those).
  SlurmDispatcher(SlurmDispatchOptions options, v1::WorkerSpec spec, const CancelToken* cancel);
  ~SlurmDispatcher();

  // Checks Slurm and the spool, then starts following.
  Status Start();
  // From any thread; `done` runs once, on the dispatcher's thread or (for a result already in
  // the spool) on the caller's.
  void Submit(v1::WorkerJob job, Done done);
  // Submits what is gathered and blocks until every job submitted so far is answered (or the
  // work is aborted).
  void Drain();

  const DispatchCounters& counters() const { return counters_; }

 private:
  struct Task {
    std::string job_id;
    int index = 0;
    int attempt = 1;
    std::vector<std::string> keys;  // not yet answered
  };

  // Callbacks to run once the lock is released, and the keys they answer.
  struct Answers {
    std::vector<std::pair<Done, StatusOr<v1::WorkerResult>>> calls;
    std::vector<std::string> keys;
  };

  void Loop() EXCLUDES(mu_);
  // Called with the lock held; let it go while sbatch or squeue runs.
  void SubmitGathered() REQUIRES(mu_);
  // Writes shards for `jobs` (split over tasks) and submits them as one array.
  Status SubmitArray(const std::vector<std::vector<std::string>>& shards, int attempt)
      EXCLUDES(mu_);
  void Poll() REQUIRES(mu_);
  // Reads the results of `task`'s keys that are there; true when none is missing.
  bool Collect(Task& task, Answers* answers) REQUIRES(mu_);
  void Answer(const std::string& key, StatusOr<v1::WorkerResult> result, Answers* answers)
      REQUIRES(mu_);
  void Deliver(Answers& answers) EXCLUDES(mu_);
  void CancelArrays() REQUIRES(mu_);
  void TaskEnded(const Task& task) REQUIRES(mu_);
  std::string LogTail(const Task& task) const;

  SlurmDispatchOptions options_;
  v1::WorkerSpec spec_;
  const CancelToken* cancel_;
  Spool spool_;
  SlurmClient slurm_;
  Mutex mu_;
  std::condition_variable cv_, drained_cv_;
  // Every job not yet answered, by key, and its callbacks.
  std::map<std::string, v1::WorkerJob> jobs_ GUARDED_BY(mu_);
  std::map<std::string, std::vector<Done>> waiting_ GUARDED_BY(mu_);
  std::vector<std::string> gathered_ GUARDED_BY(mu_);  // keys not yet submitted
  std::vector<Task> tasks_ GUARDED_BY(mu_);            // tasks following submitted keys
  // The shard folder of each array this process submitted, and its tasks still followed: the
  // folder goes when the last one ends.
  std::map<std::string, std::pair<std::string, int>> batches_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point first_gathered_ GUARDED_BY(mu_);
  bool drain_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;
  bool aborted_ GUARDED_BY(mu_) = false;
  int submit_failures_ GUARDED_BY(mu_) = 0;  // consecutive
  DispatchCounters counters_;
  std::thread thread_;
};

}  // namespace evald
