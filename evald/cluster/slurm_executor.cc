#include "evald/cluster/slurm_executor.h"

#include "evald/runs/verdict_fields.h"

namespace evald {

namespace {

// A worker's result as the session's outcome; no result, or a worker's fault, is no verdict
// on the code (the sample stays ungraded; a resumed run tries it again).
GradeOutcome FromWorker(const std::string& key, StatusOr<v1::WorkerResult> result) {
  if (!result.ok() || result->fault())
    return FaultOutcome(key, result.ok() ? result->verdict().detail() : result.status().message());
  GradeOutcome out;
  out.key = key;
  out.verdict = VerdictFromProto(result->verdict());
  out.verdict.cacheable = result->cacheable();
  out.seconds = result->seconds();
  out.source = VerdictSource::kSimulated;
  if (result->cross_checked()) {
    out.verdict.cross = CrossCheckFromProto(result->cross());
    out.verdict.cross.formal.cacheable = result->cross_cacheable();
    out.verdict.cross_checked = true;
  }
  return out;
}

}  // namespace

Status ValidateExecutor(const ExecutorOptions& options) {
  if (options.executor == "local") return Status::Ok();
  if (options.executor != "slurm")
    return Status::InvalidArgument("unknown executor '" + options.executor + "' (local | slurm)");
  if (options.slurm.spool.empty())
    return Status::InvalidArgument("--executor slurm needs --spool DIR (a shared directory)");
  if (options.slurm.spool.front() != '/')
    return Status::InvalidArgument("--spool must be an absolute path (the workers see it too)");
  return Status::Ok();
}

RemoteExecutorFactory ExecutorFactoryFor(const ExecutorOptions& options) {
  if (!options.remote()) return {};
  return [slurm = options.slurm](
             RemoteExecutorContext context) -> StatusOr<std::unique_ptr<SimulationExecutor>> {
    auto executor = std::make_unique<SlurmExecutor>(slurm, std::move(context));
    EVALD_RETURN_IF_ERROR(executor->Start());
    return std::unique_ptr<SimulationExecutor>(std::move(executor));
  };
}

SlurmExecutor::SlurmExecutor(const SlurmDispatchOptions& options, RemoteExecutorContext context)
    : dispatcher_(options, std::move(context.spec), context.cancel) {}

void SlurmExecutor::Submit(SimulationJob job, Done done) {
  v1::WorkerJob w;
  w.set_key(job.key);
  w.set_problem(job.problem->name);
  w.set_code(job.code);
  dispatcher_.Submit(std::move(w),
                     [key = job.key, done = std::move(done)](StatusOr<v1::WorkerResult> result) {
                       GradeOutcome out = FromWorker(key, std::move(result));
                       done(out);
                     });
}

}  // namespace evald
