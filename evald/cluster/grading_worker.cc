#include "evald/cluster/grading_worker.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

#include "base/numbers.h"
#include "base/thread_annotations.h"
#include "datasets/dataset.h"
#include "evald/cluster/spool.h"
#include "evald/runs/grading_session.h"
#include "evald/runs/grading_settings.h"
#include "evald/runs/verdict_fields.h"
#include "harness/failure_category.h"

namespace evald {

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

StatusOr<std::string> ShardPath(const WorkerOptions& o, const Spool& spool) {
  if (!o.shard.empty()) return o.shard;
  if (o.task_list.empty())
    return Status::InvalidArgument("evald worker needs --shard FILE or --task-list FILE");
  int index = o.index;
  if (index < 0) {
    // Slurm's array index, else a Kubernetes Indexed Job's.
    std::string text = Env("SLURM_ARRAY_TASK_ID");
    if (text.empty()) text = Env("JOB_COMPLETION_INDEX");
    if (text.empty() || text.size() > 9 ||
        text.find_first_not_of("0123456789") != std::string::npos)
      return Status::InvalidArgument(
          "no task index: --index N, SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX");
    index = std::atoi(text.c_str());
  }
  return spool.ShardOfTask(o.task_list, index);
}

std::string Host() {
  char buf[256] = {0};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

v1::WorkerResult ResultBase(const std::string& key) {
  v1::WorkerResult r;
  r.set_key(key);
  r.set_worker_host(Host());
  const std::string job = Env("SLURM_ARRAY_JOB_ID");
  if (!job.empty()) r.set_slurm_job(job + "_" + Env("SLURM_ARRAY_TASK_ID"));
  return r;
}

v1::WorkerResult FaultResult(const std::string& key, const std::string& why) {
  v1::WorkerResult r = ResultBase(key);
  r.set_fault(true);
  r.mutable_verdict()->set_verdict(std::string(1, category::kInternalError));
  r.mutable_verdict()->set_detail("worker " + r.worker_host() + ": " + why);
  return r;
}

v1::WorkerResult ResultOf(const std::string& key, const GradeOutcome& o) {
  v1::WorkerResult r = ResultBase(key);
  *r.mutable_verdict() = VerdictToProto(o.verdict);
  r.set_cacheable(o.verdict.cacheable);
  r.set_fault(o.fault);
  r.set_seconds(o.seconds);
  if (o.verdict.cross_checked) {
    r.set_cross_checked(true);
    *r.mutable_cross() = CrossCheckToProto(o.verdict.cross);
    r.set_cross_cacheable(o.verdict.cross.cacheable());
  }
  return r;
}

// The submitter's settings, as its session took them: cross-checks only where it ran Yosys
// (and then not optional: the key says they were made).
v1::GradingSettings SettingsOf(const v1::WorkerSpec& spec) {
  v1::GradingSettings g = spec.grading();
  if (spec.yosys_version().empty()) {
    g.mutable_cross_checks()->set_formal(false);
    g.mutable_cross_checks()->set_formal_failures(false);
    g.mutable_cross_checks()->set_synthesis(false);
  } else {
    g.mutable_cross_checks()->set_optional(false);
  }
  return g;
}

GradingResources ResourcesOf(const WorkerOptions& o) {
  GradingResources r;
  int jobs = o.jobs;
  if (jobs <= 0) jobs = std::atoi(Env("SLURM_CPUS_PER_TASK").c_str());
  r.jobs = std::clamp(jobs, 1, 256);
  r.sandbox = o.sandbox;
  return r;
}

// The same tools as the submitter's, or no grading at all: a key made with other versions is
// not the key the verdict is stored under.
Status SameTools(const GradingSession& session, const v1::WorkerSpec& spec) {
  if (session.simulator_version() != spec.simulator_version())
    return Status::Unavailable("this node's simulator (" + session.simulator_version() +
                               ") differs from the submitter's (" + spec.simulator_version() + ")");
  const std::string& yosys = session.settings().cross_checks().yosys_version();
  if (!spec.yosys_version().empty() && yosys != spec.yosys_version())
    return Status::Unavailable("this node's Yosys (" + yosys + ") differs from the submitter's (" +
                               spec.yosys_version() + ")");
  return Status::Ok();
}

// Fault injection for the cluster tests (tests/slurm_test.cc), set in the operator's environment
// only. EVALD_FAULT_WORKER_SLEEP_S makes a worker wait that long before grading, so that a test
// can cancel it or kill its submitter while the array runs. EVALD_FAULT_WORKER_HOLD_FILE holds
// the first worker to create that file (it writes its Slurm task there) for five minutes before
// grading: a test cancels exactly that task, which cannot have finished first, however loaded the
// machine; later workers, its resubmission included, find the file and go on.
void MaybeInjectDelay() {
  const int seconds = std::atoi(Env("EVALD_FAULT_WORKER_SLEEP_S").c_str());
  if (seconds > 0 && seconds <= 600) ::sleep(static_cast<unsigned>(seconds));
  const std::string hold = Env("EVALD_FAULT_WORKER_HOLD_FILE");
  if (hold.empty()) return;
  const int fd = ::open(hold.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const std::string task = Env("SLURM_ARRAY_JOB_ID") + "_" + Env("SLURM_ARRAY_TASK_ID") + "\n";
  const bool written = ::write(fd, task.data(), task.size()) == static_cast<ssize_t>(task.size());
  ::close(fd);
  if (written) ::sleep(300);
}

}  // namespace

StatusOr<WorkerSummary> RunWorker(const WorkerOptions& options) {
  Spool spool(options.spool);
  auto path = ShardPath(options, spool);
  if (!path.ok()) return path.status();
  auto shard = spool.ReadShard(*path);
  if (!shard.ok()) return shard.status();
  const v1::WorkerSpec& spec = shard->spec();
  WorkerSummary summary;
  summary.jobs = shard->jobs_size();
  std::vector<const v1::WorkerJob*> todo;
  for (const auto& job : shard->jobs()) {
    auto earlier = spool.ReadResult(job.key());
    if (!earlier.ok() && !IsSpoolKey(job.key()))
      return Status::Corruption(*path + ": a job's key is not a key");
    if (earlier.ok() && earlier->has_value()) {
      ++summary.skipped;  // graded by an earlier attempt of this task
    } else {
      todo.push_back(&job);
    }
  }
  if (todo.empty()) return summary;
  MaybeInjectDelay();
  // Every job gets a result file, a fault saying why where it cannot be graded here.
  auto fail_all = [&](const Status& st) {
    for (const v1::WorkerJob* job : todo)
      (void)spool.WriteResult(FaultResult(job->key(), st.message()));
    summary.faults += static_cast<int>(todo.size());
    return st;
  };
  auto task = ParseTask(spec.task());
  if (!task.ok()) return fail_all(task.status());
  auto ds = Dataset::Load(spec.dataset_folder(), *task);
  if (!ds.ok()) return fail_all(ds.status().Annotate("loading the dataset"));
  Calibrations::Given given;
  for (const auto& c : spec.calibrations()) given[c.problem()] = c;
  std::vector<const Problem*> problems;
  std::set<const Problem*> seen;
  for (const v1::WorkerJob* job : todo)
    if (const Problem* p = ds->Find(job->problem()); p != nullptr && seen.insert(p).second)
      problems.push_back(p);
  auto session = GradingSession::Open(SettingsOf(spec), ResourcesOf(options), *ds, problems, given);
  if (!session.ok()) return fail_all(session.status().Annotate("opening the sandbox"));
  if (Status st = SameTools(**session, spec); !st.ok()) return fail_all(st);

  Mutex mu;
  for (const v1::WorkerJob* job : todo) {
    const Problem* p = ds->Find(job->problem());
    std::string why;
    if (p == nullptr)
      why = "problem " + job->problem() + " is not in " + spec.dataset_folder();
    else if ((*session)->VerdictKeyFor(*p, job->code()) != job->key())
      why = "the verdict key differs from the submitter's (another dataset or tool version)";
    if (!why.empty()) {
      (void)spool.WriteResult(FaultResult(job->key(), why));
      ++summary.faults;
      continue;
    }
    (*session)->Grade(*p, job->code(), {"", 0}, [&, key = job->key()](GradeOutcome& o) {
      Status st = spool.WriteResult(ResultOf(key, o));
      MutexLock lock(mu);
      if (!st.ok()) spdlog::error("writing the result of {}: {}", key, st.ToString());
      ++(o.fault ? summary.faults : summary.graded);
    });
  }
  (*session)->Wait();
  return summary;
}

}  // namespace evald
