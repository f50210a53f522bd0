// `evald worker`: grades one shard of (problem, code) jobs from a spool directory through the
// same grading session as a local run, and writes each job's result there whole (temporary file
// + rename). Run as a Slurm array task (the shard of SLURM_ARRAY_TASK_ID in a task list), a
// Kubernetes Indexed Job (JOB_COMPLETION_INDEX) or by hand (--shard). A worker killed half-way
// leaves the results it finished and nothing partial; run again, it skips those.
#pragma once

#include <string>

#include "base/status.h"
#include "sandbox/sandbox_options.h"

namespace evald {

struct WorkerOptions {
  std::string spool;
  std::string shard;      // a shard file, or:
  std::string task_list;  // a submission's task list, with
  int index = -1;         // this task's index (-1: from the environment)
  int jobs = 0;           // sandboxes (0: SLURM_CPUS_PER_TASK, else 1)
  SandboxOptions sandbox;
};

struct WorkerSummary {
  int jobs = 0;
  int graded = 0;
  int skipped = 0;  // a result was there already
  int faults = 0;
};

StatusOr<WorkerSummary> RunWorker(const WorkerOptions& options);

}  // namespace evald
