// Slurm's own command-line tools, driven with argument vectors (no shell): sbatch submits a job
// array, squeue lists the tasks still pending or running, scancel cancels. evald keeps no
// scheduler of its own; what the cluster's policy says (partitions, accounts, limits) holds.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace evald {

struct SlurmSubmitOptions {
  std::string partition;   // -p (empty: the cluster's default)
  std::string account;     // -A
  std::string time_limit;  // -t, Slurm's syntax ("30", "1:00:00", "1-0")
  int cpus_per_task = 1;   // -c; the worker grades with as many sandboxes
  std::string job_name = "evald-grade";
};

// One array task that squeue still lists.
struct SlurmTaskState {
  std::string state;   // PENDING, RUNNING, COMPLETING, ...
  std::string reason;  // why it waits, when it does
};

class SlurmClient {
 public:
  // `bin_dir`: where sbatch, squeue and scancel are (empty: PATH).
  explicit SlurmClient(std::string bin_dir = "") : bin_dir_(std::move(bin_dir)) {}

  // sbatch --array=0-(tasks-1) SCRIPT; the array's job id.
  StatusOr<std::string> SubmitArray(const std::string& script, int tasks,
                                    const std::string& log_pattern,
                                    const SlurmSubmitOptions& options) const;
  // The tasks of these arrays that are still queued or running, by "JOBID_INDEX". An error when
  // squeue itself fails (the controller is down): nothing may be concluded from it then.
  StatusOr<std::map<std::string, SlurmTaskState>> LiveTasks(
      const std::set<std::string>& job_ids) const;
  // scancel JOBID (the whole array) or JOBID_INDEX (one task).
  Status Cancel(const std::string& job_or_task) const;

  // Whether sbatch and squeue run here and reach a controller (for a clear error up front).
  Status Check() const;

 private:
  std::string Tool(const char* name) const;
  std::string bin_dir_;
};

// "a b c" lines of `squeue -h -r -o "%F %K %T %r"` into the map (the parser, for tests and
// fuzzing): unexpected lines are skipped.
std::map<std::string, SlurmTaskState> ParseSqueueTasks(const std::string& output);

}  // namespace evald
