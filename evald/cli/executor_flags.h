// Where grading runs, for `evald eval`, `evald run` and `evald serve`: --executor local|slurm
// with the spool and the sbatch options (docs/scale-out.md); and `evald worker`, the command a
// cluster's array tasks run.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "base/status.h"
#include "evald/cluster/slurm_executor.h"

namespace evald {

struct ExecutorFlags {
  std::string executor = "local", spool, partition, account, time_limit, worker_binary;
  int max_tasks = 32, jobs_per_task = 4, cpus_per_task = 1, resubmits = 2, poll_ms = 2000;
};

void AddExecutorFlags(CLI::App* cmd, ExecutorFlags* flags);
// The options, validated (a spool for slurm, an absolute path).
StatusOr<ExecutorOptions> ExecutorOptionsOf(const ExecutorFlags& flags);

void RegisterWorkerCommand(CLI::App& app, std::function<int()>* run);

}  // namespace evald
