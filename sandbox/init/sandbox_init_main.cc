// evald-sandbox: the init process of one sandbox worker. evald starts it in fresh mount, pid,
// network, IPC and UTS namespaces (as far as the host allows) with a request pipe on fd 3 and a
// response pipe on fd 4. It builds the read-only filesystem view once, then runs jobs: for each,
// a fresh size-limited scratch directory, the job's files written read-only into it, its steps
// run one after another under the unprivileged uid, every leftover process killed, the scratch
// discarded. This process is trusted code; only the steps it starts run untrusted programs.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "sandbox/frame_io.h"
#include "sandbox/init/fs_view.h"
#include "sandbox/init/seccomp_filter.h"
#include "sandbox/init/step_runner.h"
#include "sandbox/sandbox_protocol.pb.h"

namespace evald::sandbox {
namespace {

constexpr int kRequestFd = 3;
constexpr int kResponseFd = 4;
constexpr int kMaxFiles = 64;

bool ValidFileName(const std::string& name) {
  if (name.empty() || name.size() > 128 || name[0] == '.') return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// Inputs are owned by the init's identity and read-only, so a design cannot rewrite its
// testbench; O_EXCL|O_NOFOLLOW so nothing already in the scratch directory can redirect them.
std::string WriteInput(const std::string& dir, const std::string& name, const std::string& data) {
  std::string path = dir + "/" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (fd < 0) return "create " + name + ": " + std::strerror(errno);
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return "write " + name + ": " + std::strerror(err);
    }
    off += static_cast<size_t>(n);
  }
  ::close(fd);
  return "";
}

std::string MakeWritableDir(const std::string& path, uint32_t uid, uint32_t gid) {
  if (::mkdir(path.c_str(), 0700) != 0) return "mkdir " + path + ": " + std::strerror(errno);
  if (uid != 0 && ::chown(path.c_str(), uid, gid) != 0)
    return "chown " + path + ": " + std::strerror(errno);
  return "";
}

// Removes everything under `dir` except the relative paths in `keep` (and the folders leading to
// them) and the steps' temporary folder. Runs as the init, which owns the scratch directory.
void KeepOnly(const std::string& dir, const google::protobuf::RepeatedPtrField<std::string>& keep,
              const std::string& prefix = "") {
  std::error_code ec;
  // Listed first, removed after: whether readdir() still returns entries of a directory that
  // changes under it is unspecified, and nothing may be skipped here.
  std::vector<std::filesystem::directory_entry> entries;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) entries.push_back(entry);
  for (const auto& entry : entries) {
    std::string rel = prefix + entry.path().filename().string();
    if (prefix.empty() && rel == ".tmp") continue;
    bool kept = false, leads_to_kept = false;
    for (const auto& k : keep) {
      kept = kept || k == rel;
      leads_to_kept = leads_to_kept || k.rfind(rel + "/", 0) == 0;
    }
    if (kept) continue;
    if (leads_to_kept && entry.is_directory(ec) && !entry.is_symlink(ec)) {
      KeepOnly(entry.path().string(), keep, rel + "/");
      continue;
    }
    std::filesystem::remove_all(entry.path(), ec);  // does not follow symbolic links
  }
}

// Removes every System V IPC object of the sandbox's IPC namespace, so that nothing a job
// created (shared memory counts against the worker's memory limit) outlives it. Seccomp already
// refuses the calls that create them; this holds where seccomp is unavailable. Returns how many
// objects were found.
int RemoveIpcObjects() {
  int removed = 0;
  shm_info shm_usage{};
  int max_index = ::shmctl(0, SHM_INFO, reinterpret_cast<shmid_ds*>(&shm_usage));
  for (int i = 0; i <= max_index; ++i) {
    shmid_ds ds{};
    int id = ::shmctl(i, SHM_STAT, &ds);
    if (id >= 0 && ::shmctl(id, IPC_RMID, nullptr) == 0) ++removed;
  }
  msginfo msg_usage{};
  max_index = ::msgctl(0, MSG_INFO, reinterpret_cast<msqid_ds*>(&msg_usage));
  for (int i = 0; i <= max_index; ++i) {
    msqid_ds ds{};
    int id = ::msgctl(i, MSG_STAT, &ds);
    if (id >= 0 && ::msgctl(id, IPC_RMID, nullptr) == 0) ++removed;
  }
  seminfo sem_usage{};
  max_index = ::semctl(0, 0, SEM_INFO, &sem_usage);
  for (int i = 0; i <= max_index; ++i) {
    semid_ds ds{};
    int id = ::semctl(i, 0, SEM_STAT, &ds);
    if (id >= 0 && ::semctl(id, 0, IPC_RMID) == 0) ++removed;
  }
  return removed;
}

class Init {
 public:
  int Main() {
    ::signal(SIGPIPE, SIG_IGN);
    ::syscall(SYS_close_range, 5U, ~0U, 0U);
    if (!ReadFrame(kRequestFd, &config_).ok()) return 2;
    SandboxReady ready;
    // Host facts stay outside: our own host name (UTS namespace) and cgroup root (the host
    // joined us to the worker's cgroup before sending the config, so it becomes our "/").
    (void)::sethostname("evald-sandbox", 13);
    (void)::unshare(CLONE_NEWCGROUP);
    if (config_.build_fs_view()) {
      bool proc = false;
      std::string err =
          BuildFsView({config_.readonly_binds().begin(), config_.readonly_binds().end()},
                      config_.pid_namespace(), &proc);
      if (!err.empty()) {
        ready.set_error("filesystem view: " + err);
        (void)WriteFrame(kResponseFd, ready);
        return 1;
      }
      ready.set_fs_view(true);
      ready.set_proc_mounted(proc);
      ctx_.own_proc = proc;
    }
    ctx_.pid_namespace = config_.pid_namespace();
    if (config_.uid() != 0 && ::geteuid() == 0) {
      ctx_.uid = config_.uid();
      ctx_.gid = config_.gid();
      ready.set_uid_drop(true);
    }
    if (config_.seccomp() && seccomp_.Compile() == 0 && ProbeSeccomp()) ctx_.seccomp = &seccomp_;
    ready.set_seccomp(ctx_.seccomp != nullptr);
    if (!WriteFrame(kResponseFd, ready).ok()) return 1;

    while (true) {
      JobRequest request;
      Status st = ReadFrame(kRequestFd, &request);
      if (!st.ok()) return st.code() == Status::Code::kUnavailable ? 0 : 1;
      JobResponse response = RunJob(request);
      if (!WriteFrame(kResponseFd, response).ok()) return 1;
    }
  }

 private:
  // seccomp can be missing (old kernels, some containers): find out once, in a throwaway child.
  bool ProbeSeccomp() const {
    pid_t pid = ::fork();
    if (pid == 0) {
      if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(1);
      ::_exit(seccomp_.Install() == 0 ? 0 : 1);
    }
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

  JobResponse RunJob(const JobRequest& request) {
    JobResponse response;
    if (request.files_size() > kMaxFiles) {
      response.set_error("too many files");
      return response;
    }
    std::string dir;
    if (config_.build_fs_view()) {
      std::string err = MountScratch(ctx_.uid, ctx_.gid, config_.scratch_bytes());
      if (!err.empty()) {
        response.set_error(err);
        return response;
      }
      dir = kScratchDir;
    } else {
      std::string tmpl = config_.host_scratch_parent() + "/job-XXXXXX";
      if (!::mkdtemp(tmpl.data())) {
        response.set_error(std::string("mkdtemp: ") + std::strerror(errno));
        return response;
      }
      dir = tmpl;
      if (ctx_.uid != 0 && ::chown(dir.c_str(), ctx_.uid, ctx_.gid) != 0) {
        response.set_error(std::string("chown scratch: ") + std::strerror(errno));
        std::filesystem::remove_all(dir);
        return response;
      }
    }
    ctx_.workdir = dir;
    std::string err = MakeWritableDir(dir + "/.tmp", ctx_.uid, ctx_.gid);
    for (const auto& [name, data] : request.files()) {
      if (!err.empty()) break;
      if (!ValidFileName(name)) err = "invalid file name '" + name + "'";
      if (err.empty()) err = WriteInput(dir, name, data);
    }
    for (const auto& step : request.steps()) {
      if (err.empty() && !step.stdin_file().empty() && !ValidFileName(step.stdin_file()))
        err = "invalid standard input file name '" + step.stdin_file() + "'";
    }
    if (!err.empty()) {
      response.set_error(err);
    } else {
      bool failed = false;
      for (const StepSpec& step : request.steps()) {
        if (failed && request.stop_on_failure() && !step.runs_after_failure()) break;
        if (step.keep_only_size() > 0) KeepOnly(dir, step.keep_only());
        StepResult r = RunStep(step, ctx_);
        failed = failed || !(r.outcome() == StepResult::EXITED && r.exit_code() == 0);
        *response.add_steps() = std::move(r);
      }
      Collect(request, dir, &response);
    }
    KillLeftovers(ctx_, 0);
    response.set_ipc_objects_removed(RemoveIpcObjects());
    if (config_.build_fs_view()) {
      UnmountScratch();
    } else {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);  // does not follow symbolic links
    }
    return response;
  }

  static void Collect(const JobRequest& request, const std::string& dir, JobResponse* response) {
    for (const auto& name : request.collect()) {
      if (!ValidFileName(name)) continue;
      // Links and anything but a regular file are refused; InvalidArgument: over the size.
      auto data = ReadFileBounded(dir + "/" + name, request.collect_max_bytes(), Links::kRefuse);
      if (data.ok()) {
        (*response->mutable_collected())[name] = std::move(*data);
      } else if (data.status().code() == Status::Code::kInvalidArgument) {
        response->add_collect_oversized(name);
      }
    }
  }

  SandboxConfig config_;
  SeccompProgram seccomp_;  // compiled once, installed by every step
  StepContext ctx_;
};

}  // namespace
}  // namespace evald::sandbox

int main() {
  return evald::sandbox::Init().Main();
}
