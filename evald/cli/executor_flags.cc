#include "evald/cli/executor_flags.h"

#include <spdlog/spdlog.h>

#include <memory>

#include "evald/cli/report_io.h"
#include "evald/cluster/grading_worker.h"

namespace evald {

void AddExecutorFlags(CLI::App* cmd, ExecutorFlags* f) {
  cmd->add_option("--executor", f->executor,
                  "where simulations run: local (default) | slurm (a job array of evald worker)");
  cmd->add_option("--spool", f->spool, "slurm: a directory every node sees at this path");
  cmd->add_option("--slurm-partition", f->partition, "slurm: sbatch --partition");
  cmd->add_option("--slurm-account", f->account, "slurm: sbatch --account");
  cmd->add_option("--slurm-time", f->time_limit, "slurm: sbatch --time per array task");
  cmd->add_option("--slurm-tasks", f->max_tasks, "slurm: array tasks per submission (default 32)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--slurm-jobs-per-task", f->jobs_per_task,
                  "slurm: fewer designs than tasks x this make fewer tasks (default 4)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--slurm-cpus-per-task", f->cpus_per_task,
                  "slurm: sbatch --cpus-per-task; the worker runs as many sandboxes")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--slurm-resubmits", f->resubmits,
                  "slurm: times a task that ended without its results is submitted again (2)")
      ->check(CLI::Range(0, 20));
  cmd->add_option("--slurm-poll-ms", f->poll_ms, "slurm: how often squeue and the spool are read")
      ->check(CLI::Range(50, 600000));
  cmd->add_option("--worker-binary", f->worker_binary,
                  "slurm: evald on the nodes (default: this executable's path)");
}

StatusOr<ExecutorOptions> ExecutorOptionsOf(const ExecutorFlags& f) {
  ExecutorOptions o;
  o.executor = f.executor;
  o.slurm.spool = f.spool;
  o.slurm.submit.partition = f.partition;
  o.slurm.submit.account = f.account;
  o.slurm.submit.time_limit = f.time_limit;
  o.slurm.submit.cpus_per_task = f.cpus_per_task;
  o.slurm.max_tasks = f.max_tasks;
  o.slurm.jobs_per_task = f.jobs_per_task;
  o.slurm.max_resubmits = f.resubmits;
  o.slurm.poll_ms = f.poll_ms;
  o.slurm.worker_binary = f.worker_binary;
  EVALD_RETURN_IF_ERROR(ValidateExecutor(o));
  return o;
}

void RegisterWorkerCommand(CLI::App& app, std::function<int()>* run) {
  auto o = std::make_shared<WorkerOptions>();
  auto* cmd = app.add_subcommand(
      "worker", "grade one shard of a spool (what a Slurm array task or an Indexed Job runs)");
  cmd->add_option("--spool", o->spool, "the spool directory")->required();
  cmd->add_option("--shard", o->shard, "a shard file");
  cmd->add_option("--task-list", o->task_list,
                  "a submission's task list; the shard is line SLURM_ARRAY_TASK_ID "
                  "(or JOB_COMPLETION_INDEX, or --index)");
  cmd->add_option("--index", o->index, "the task index (default: from the environment)");
  cmd->add_option("--jobs,-j", o->jobs, "sandboxes (default: SLURM_CPUS_PER_TASK, else 1)");
  cmd->callback([o, run] {
    *run = [o] {
      auto summary = RunWorker(*o);
      if (!summary.ok()) return Fail(summary.status());
      spdlog::info("worker: {} job(s): {} graded, {} already done, {} fault(s)", summary->jobs,
                   summary->graded, summary->skipped, summary->faults);
      return 0;  // faults are results too: the submitter reads why
    };
  });
}

}  // namespace evald
