#include "evald/cluster/slurm_client.h"

#include <sstream>

#include "base/subprocess.h"

namespace evald {

namespace {

bool AllDigits(const std::string& s) {
  if (s.empty() || s.size() > 20) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

std::string Failure(const std::string& tool, const ProcessResult& r) {
  if (r.timed_out) return tool + " did not answer in time";
  const std::string line = FirstLine(r.output);
  return tool + " failed (exit " + std::to_string(r.exit_code) + ")" +
         (line.empty() ? "" : ": " + line);
}

ProcessOptions Within(int ms) {
  ProcessOptions o;
  o.timeout = std::chrono::milliseconds(ms);
  return o;
}

}  // namespace

std::string SlurmClient::Tool(const char* name) const {
  return bin_dir_.empty() ? std::string(name) : bin_dir_ + "/" + name;
}

StatusOr<std::string> SlurmClient::SubmitArray(const std::string& script, int tasks,
                                               const std::string& log_pattern,
                                               const SlurmSubmitOptions& options) const {
  if (tasks < 1) return Status::InvalidArgument("an array needs at least one task");
  std::vector<std::string> argv = {Tool("sbatch"),
                                   "--parsable",
                                   "--array=0-" + std::to_string(tasks - 1),
                                   "--job-name=" + options.job_name,
                                   "--output=" + log_pattern,
                                   "--cpus-per-task=" + std::to_string(options.cpus_per_task),
                                   "--requeue"};
  if (!options.partition.empty()) argv.push_back("--partition=" + options.partition);
  if (!options.account.empty()) argv.push_back("--account=" + options.account);
  if (!options.time_limit.empty()) argv.push_back("--time=" + options.time_limit);
  argv.push_back(script);
  auto r = RunProcess(argv, Within(60000));
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) return Status::Unavailable(Failure("sbatch", *r));
  // --parsable: "JOBID" or "JOBID;CLUSTER".
  std::string id = FirstLine(r->output);
  id = id.substr(0, id.find(';'));
  if (!AllDigits(id))
    return Status::Unavailable("sbatch printed no job id: " + FirstLine(r->output));
  return id;
}

std::map<std::string, SlurmTaskState> ParseSqueueTasks(const std::string& output) {
  std::map<std::string, SlurmTaskState> tasks;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string job, index, state, reason;
    if (!(fields >> job >> index >> state)) continue;
    std::getline(fields, reason);
    if (!reason.empty() && reason.front() == ' ') reason.erase(0, 1);
    if (!AllDigits(job) || !AllDigits(index)) continue;  // "N/A": not an array task
    tasks[job + "_" + index] = {state, reason};
  }
  return tasks;
}

StatusOr<std::map<std::string, SlurmTaskState>> SlurmClient::LiveTasks(
    const std::set<std::string>& job_ids) const {
  if (job_ids.empty()) return std::map<std::string, SlurmTaskState>();
  std::string list;
  for (const std::string& id : job_ids) list += (list.empty() ? "" : ",") + id;
  auto r = RunProcess({Tool("squeue"), "-h", "-r", "-o", "%F %K %T %r", "-j", list}, Within(60000));
  if (!r.ok()) return r.status();
  // A job that has left the controller's memory is "Invalid job id": none of its tasks live.
  if (r->exit_code != 0 && r->output.find("Invalid job id") == std::string::npos)
    return Status::Unavailable(Failure("squeue", *r));
  return ParseSqueueTasks(r->output);
}

Status SlurmClient::Cancel(const std::string& job_or_task) const {
  auto r = RunProcess({Tool("scancel"), job_or_task}, Within(60000));
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) return Status::Unavailable(Failure("scancel", *r));
  return Status::Ok();
}

Status SlurmClient::Check() const {
  auto r = RunProcess({Tool("squeue"), "-h", "-o", "%i"}, Within(30000));
  if (!r.ok())
    return Status::Unavailable("--executor slurm: " + r.status().message() +
                               " (is Slurm's client installed?)");
  if (r->exit_code != 0)
    return Status::Unavailable("--executor slurm: " + Failure("squeue", *r) +
                               " (is slurmctld reachable? SLURM_CONF?)");
  return Status::Ok();
}

}  // namespace evald
