#include "sandbox/sandbox_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/file_io.h"
#include "sandbox/frame_io.h"
#include "sandbox/step_wall.h"

#ifndef EVALD_SANDBOX_INIT_BUILD_PATH
#define EVALD_SANDBOX_INIT_BUILD_PATH ""
#endif

namespace evald {

namespace {

constexpr int kStartTimeoutMs = 20000;
constexpr unsigned long kAllNamespaces =
    CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;

// Each worker gets a uid nobody else uses, so RLIMIT_NPROC and kill(-1) as that uid concern
// exactly its own processes. Derived from our pid so that concurrent evald processes differ.
uint32_t SandboxUid(int index) {
  static std::atomic<uint32_t> counter{0};
  uint32_t slot =
      (static_cast<uint32_t>(::getpid()) * 64u + counter++ + static_cast<uint32_t>(index)) %
      400000u;
  return 600000u + slot;
}

bool WriteProcFile(const std::string& path, const std::string& value) {
  std::ofstream f(path);
  f << value;
  f.flush();
  return static_cast<bool>(f);
}

}  // namespace

std::string SandboxLayers::Describe() const {
  auto on = [](bool b) { return b ? "on" : "OFF"; };
  std::string ns;
  for (auto [name, flag] : {std::pair{"mount", mount_ns},
                            {"pid", pid_ns},
                            {"net", net_ns},
                            {"ipc", ipc_ns},
                            {"uts", uts_ns}}) {
    if (flag) ns += (ns.empty() ? "" : ",") + std::string(name);
  }
  std::string out = "namespaces=" + (ns.empty() ? std::string("OFF") : ns);
  if (user_ns) out += "(user-ns)";
  out += " fs-view=" + std::string(on(fs_view)) + " uid-drop=" + on(uid_drop) +
         " rlimits=on seccomp=" + on(seccomp) + " cgroup=";
  if (cgroup.empty()) {
    out += "OFF";
  } else {
    out += cgroup + "(" + (cgroup_memory ? "memory" : "") +
           (cgroup_memory && cgroup_pids ? "," : "") + (cgroup_pids ? "pids" : "") + ")";
  }
  out += std::string(" native-code=") + (ContainsNativeCode() ? "allowed" : "refused");
  return out;
}

std::string FindSandboxInit(const std::string& configured) {
  if (!configured.empty()) return configured;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (auto dir = self.parent_path(); !dir.empty(); dir = dir.parent_path()) {
      for (const char* rel : {"evald-sandbox", "bin/evald-sandbox"}) {
        auto candidate = dir / rel;
        if (IsRegularFile(candidate.string())) return candidate.string();
      }
      if (dir == dir.root_path()) break;
    }
  }
  return EVALD_SANDBOX_INIT_BUILD_PATH;
}

SandboxWorker::SandboxWorker(SandboxOptions options, int index)
    : options_(std::move(options)), index_(index) {}

SandboxWorker::~SandboxWorker() {
  Stop();
  if (!scratch_parent_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(scratch_parent_, ec);
  }
}

void SandboxWorker::Stop() {
  if (to_init_ >= 0) ::close(to_init_);
  if (from_init_ >= 0) ::close(from_init_);
  to_init_ = from_init_ = -1;
  if (pid_ > 0) {
    // Killing the pid namespace's init kills every process in the namespace.
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  cgroup_.reset();
}

Status SandboxWorker::Spawn(unsigned long clone_flags) {
  std::string init = FindSandboxInit(options_.init_path);
  if (init.empty() || ::access(init.c_str(), X_OK) != 0)
    return Status::NotFound(
        "sandbox init executable evald-sandbox not found (looked beside the "
        "evald executable and in the build tree)");
  int req[2], resp[2];
  if (::pipe2(req, O_CLOEXEC) != 0) return Status::IoError("pipe");
  if (::pipe2(resp, O_CLOEXEC) != 0) {
    ::close(req[0]);
    ::close(req[1]);
    return Status::IoError("pipe");
  }
  // Prepared before clone: the child may only make async-signal-safe calls.
  std::string arg0 = "evald-sandbox";
  char* argv[] = {arg0.data(), nullptr};
  char* envp[] = {nullptr};
  pid_t pid = static_cast<pid_t>(
      ::syscall(SYS_clone, clone_flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    int in = ::fcntl(req[0], F_DUPFD, 10), out = ::fcntl(resp[1], F_DUPFD, 10);
    if (in < 0 || out < 0 || ::dup2(in, 3) < 0 || ::dup2(out, 4) < 0) ::_exit(126);
    ::execve(init.c_str(), argv, envp);
    ::_exit(127);
  }
  int err = errno;
  ::close(req[0]);
  ::close(resp[1]);
  if (pid < 0) {
    ::close(req[1]);
    ::close(resp[0]);
    return Status::Unavailable(std::string("clone: ") + std::strerror(err));
  }
  pid_ = pid;
  to_init_ = req[1];
  from_init_ = resp[0];
  return Status::Ok();
}

Status SandboxWorker::Start() {
  Stop();
  layers_ = SandboxLayers();
  std::string cg_why;
  cgroup_ =
      CgroupLimits::Create("evald-" + std::to_string(::getpid()) + "-" + std::to_string(index_) +
                               "-" + std::to_string(SandboxUid(index_)),
                           options_.memory_bytes, options_.max_pids, &cg_why);
  EVALD_RETURN_IF_ERROR(SpawnInit());
  auto config = InitConfig();
  if (!config.ok()) return config.status();
  return Handshake(*config);
}

// As root: all namespaces directly. Otherwise: inside an unprivileged user namespace, where we
// are root over our own mount/pid/net namespaces but cannot switch uid. Else: none.
Status SandboxWorker::SpawnInit() {
  const bool root = ::geteuid() == 0;
  unsigned long attempts[] = {kAllNamespaces, kAllNamespaces | CLONE_NEWUSER, 0};
  Status spawned = Status::Unavailable("no attempt");
  unsigned long flags = 0;
  for (unsigned long f : attempts) {
    if ((f & CLONE_NEWUSER) && root) continue;
    if (f == kAllNamespaces && !root) continue;
    if (f != 0 && !options_.use_namespaces) continue;
    if (f == 0 && options_.require_full_isolation)
      return Status::Unavailable("namespaces unavailable and full isolation required");
    spawned = Spawn(f);
    if (spawned.ok()) {
      flags = f;
      break;
    }
  }
  if (!spawned.ok()) return spawned;
  if (flags & CLONE_NEWUSER) {
    // Map only our own ids; the init is "root" in a namespace that owns nothing else.
    std::string proc = "/proc/" + std::to_string(pid_);
    WriteProcFile(proc + "/setgroups", "deny");
    WriteProcFile(proc + "/uid_map", "0 " + std::to_string(::geteuid()) + " 1");
    WriteProcFile(proc + "/gid_map", "0 " + std::to_string(::getegid()) + " 1");
  }
  if (cgroup_ && !cgroup_->AddProcess(pid_)) cgroup_.reset();
  layers_.mount_ns = flags & CLONE_NEWNS;
  layers_.pid_ns = flags & CLONE_NEWPID;
  layers_.net_ns = flags & CLONE_NEWNET;
  layers_.ipc_ns = flags & CLONE_NEWIPC;
  layers_.uts_ns = flags & CLONE_NEWUTS;
  layers_.user_ns = flags & CLONE_NEWUSER;
  if (cgroup_) {
    layers_.cgroup = cgroup_->version();
    layers_.cgroup_memory = cgroup_->memory();
    layers_.cgroup_pids = cgroup_->pids();
  }
  return Status::Ok();
}

// What the init is told to build, given the namespaces it got.
StatusOr<sandbox::SandboxConfig> SandboxWorker::InitConfig() {
  sandbox::SandboxConfig config;
  config.set_build_fs_view(layers_.mount_ns);
  config.set_pid_namespace(layers_.pid_ns);
  config.set_scratch_bytes(options_.scratch_bytes);
  config.set_seccomp(true);
  for (const auto& p : options_.readonly_binds) config.add_readonly_binds(p);
  if (::geteuid() == 0 && !layers_.user_ns) {
    uint32_t uid = SandboxUid(index_);
    config.set_uid(uid);
    config.set_gid(uid);
  }
  if (!layers_.mount_ns) {
    if (scratch_parent_.empty()) {
      std::string base = options_.host_scratch_parent.empty()
                             ? std::filesystem::temp_directory_path().string()
                             : options_.host_scratch_parent;
      std::string tmpl = base + "/evald-sandbox-XXXXXX";
      if (!::mkdtemp(tmpl.data()))
        return Status::IoError("cannot create scratch parent in " + base);
      ::chmod(tmpl.c_str(), 0711);
      scratch_parent_ = tmpl;
    }
    config.set_host_scratch_parent(scratch_parent_);
  }
  return config;
}

// Sends the configuration, waits for the init's report of the layers it built.
Status SandboxWorker::Handshake(const sandbox::SandboxConfig& config) {
  EVALD_RETURN_IF_ERROR(sandbox::WriteFrame(to_init_, config).Annotate("configuring sandbox"));
  sandbox::SandboxReady ready;
  Status st = sandbox::ReadFrame(from_init_, &ready, 1 << 20, kStartTimeoutMs);
  if (!st.ok()) {
    Stop();
    return st.Annotate("sandbox init did not start");
  }
  if (!ready.error().empty()) {
    Stop();
    return Status::Unavailable("sandbox init: " + ready.error());
  }
  layers_.fs_view = ready.fs_view();
  layers_.proc = ready.proc_mounted();
  layers_.uid_drop = ready.uid_drop();
  layers_.seccomp = ready.seccomp();
  if (options_.require_full_isolation && !layers_.ContainsNativeCode()) {
    Stop();
    return Status::Unavailable("full isolation required but the sandbox has: " +
                               layers_.Describe());
  }
  return Status::Ok();
}

Status SandboxWorker::AwaitResponse(std::chrono::milliseconds* deadline) const {
  using Clock = std::chrono::steady_clock;
  const auto until = Clock::now() + *deadline;
  constexpr auto kSlice = std::chrono::milliseconds(100);
  while (true) {
    if (cancel_->stopped()) return Status::Cancelled("the run was cancelled");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0) break;
    pollfd p{from_init_, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min(left, kSlice).count()));
    if (n != 0) break;  // something to read (or an error ReadFrame will report)
  }
  *deadline = std::max(std::chrono::milliseconds(1),
                       std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()));
  return Status::Ok();
}

StatusOr<sandbox::JobResponse> SandboxWorker::Run(const sandbox::JobRequest& request) {
  return Run(request, sandbox::JobWallCeiling(request) + std::chrono::seconds(15));
}

StatusOr<sandbox::JobResponse> SandboxWorker::Run(const sandbox::JobRequest& request,
                                                  std::chrono::milliseconds deadline) {
  last_oom_ = false;
  if (pid_ <= 0) EVALD_RETURN_IF_ERROR(Start());
  uint64_t oom_before = cgroup_ ? cgroup_->OomKills() : 0;
  if (cancel_ != nullptr && cancel_->stopped()) return Status::Cancelled("the run was cancelled");
  Status st = sandbox::WriteFrame(to_init_, request);
  if (st.ok() && cancel_ != nullptr) {
    st = AwaitResponse(&deadline);
    if (st.code() == Status::Code::kCancelled) {
      Stop();  // the job's processes die with the init; the next job starts a fresh one
      return st;
    }
  }
  sandbox::JobResponse response;
  if (st.ok())
    st = sandbox::ReadFrame(from_init_, &response, sandbox::kMaxFrameBytes,
                            static_cast<int>(deadline.count()));
  if (cgroup_) last_oom_ = cgroup_->OomKills() > oom_before;
  if (!st.ok()) {
    // The init died (OOM-killed with the job, say) or the job overran every step's limit:
    // kill the whole namespace; the next job starts a fresh one.
    Stop();
    return st.Annotate(last_oom_ ? "sandbox killed by the memory limit" : "sandbox job failed");
  }
  if (!response.error().empty()) return Status::Internal("sandbox: " + response.error());
  return response;
}

}  // namespace evald
