#include "sandbox/init/step_runner.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "sandbox/init/cpu_limit.h"
#include "sandbox/init/run_queue_wait.h"
#include "sandbox/init/seccomp_filter.h"
#include "sandbox/step_wall.h"

namespace evald::sandbox {

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kSearchPath[] = {"/usr/local/bin", "/usr/bin", "/bin"};

void SetLimit(int resource, uint64_t soft, uint64_t hard) {
  rlimit rl{static_cast<rlim_t>(soft), static_cast<rlim_t>(hard)};
  ::setrlimit(resource, &rl);
}

[[noreturn]] void ChildFail(const char* what) {
  // Only system calls between the child's start and exec (StartChild).
  char buf[256];
  size_t n = 0;
  auto put = [&](const char* s) {
    while (*s && n < sizeof buf - 1) buf[n++] = *s++;
  };
  put("evald-sandbox: ");
  put(what);
  put(": ");
  const char* reason = ::strerrordesc_np(errno);  // neither translates nor allocates
  put(reason != nullptr ? reason : "unknown error");
  put("\n");
  (void)!::write(2, buf, n);
  ::_exit(126);
}

// Everything the child needs, prepared before fork so that the child allocates nothing.
struct Prepared {
  std::vector<std::string> argv_storage;
  std::vector<char*> argv;
  std::vector<std::string> env_storage;
  std::vector<char*> env;
  std::vector<std::string> candidates;  // executable paths to try in order
};

Prepared Prepare(const StepSpec& spec, const StepContext& ctx) {
  Prepared p;
  for (const auto& a : spec.argv()) p.argv_storage.push_back(a);
  for (auto& a : p.argv_storage) p.argv.push_back(a.data());
  p.argv.push_back(nullptr);
  p.env_storage = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + ctx.workdir,
                   "TMPDIR=" + ctx.workdir + "/.tmp", "LC_ALL=C", "LANG=C"};
  for (auto& e : p.env_storage) p.env.push_back(e.data());
  p.env.push_back(nullptr);
  const std::string& prog = p.argv_storage.empty() ? std::string() : p.argv_storage[0];
  if (prog.find('/') != std::string::npos) {
    p.candidates.push_back(prog);
  } else {
    for (const char* dir : kSearchPath) p.candidates.push_back(std::string(dir) + "/" + prog);
  }
  return p;
}

// The step's own mount namespace without /proc: its command line and memory cannot be read back
// as files. Detaching takes /proc's masks (proc/cmdline ...) with it.
void HideProc() {
  if (::unshare(CLONE_NEWNS) != 0) ChildFail("unshare mount namespace");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ChildFail("private");
  if (::umount2("/proc", MNT_DETACH) != 0) ChildFail("detach /proc");
}

// Standard input: /dev/null, or the step's stdin_file (a flat name, checked by the init). An
// earlier step could have left a link or a FIFO under that name: no link is followed, and the
// open does not wait for a writer (we are the init's vfork child, the init waits for us);
// anything but a regular file is refused.
void OpenStdin(const StepSpec& spec) {
  const bool from_file = !spec.stdin_file().empty();
  int fd = from_file ? ::open(spec.stdin_file().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
                     : ::open("/dev/null", O_RDONLY);
  if (fd < 0) ChildFail("stdin");
  if (from_file) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      errno = EINVAL;
      ChildFail("stdin is not a regular file");
    }
    if (::fcntl(fd, F_SETFL, 0) != 0) ChildFail("stdin");
  }
  if (fd != 0 && (::dup2(fd, 0) < 0 || ::close(fd) != 0)) ChildFail("stdin");
}

[[noreturn]] void ExecChild(const StepSpec& spec, const StepContext& ctx, const Prepared& p,
                            int out_fd, int err_fd) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::chdir(ctx.workdir.c_str()) != 0) ChildFail("chdir");
  if (::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) ChildFail("stdout");
  ::syscall(SYS_close_range, 3U, ~0U, 0U);
  ::umask(022);
  if (spec.hide_proc() && ctx.own_proc) HideProc();

  SetLimit(RLIMIT_CORE, 0, 0);
  if (spec.cpu_seconds()) SetLimit(RLIMIT_CPU, spec.cpu_seconds(), spec.cpu_seconds() + 1);
  if (spec.file_size_bytes())
    SetLimit(RLIMIT_FSIZE, spec.file_size_bytes(), spec.file_size_bytes());
  if (spec.max_open_files()) SetLimit(RLIMIT_NOFILE, spec.max_open_files(), spec.max_open_files());
  if (spec.max_processes()) SetLimit(RLIMIT_NPROC, spec.max_processes(), spec.max_processes());
  SetLimit(RLIMIT_MEMLOCK, 0, 0);
  SetLimit(RLIMIT_MSGQUEUE, 0, 0);

  if (ctx.uid != 0) {
    gid_t g = ctx.gid;
    if (::setgroups(0, nullptr) != 0 && errno != EPERM) ChildFail("setgroups");
    if (::setresgid(g, g, g) != 0) ChildFail("setresgid");
    if (::setresuid(ctx.uid, ctx.uid, ctx.uid) != 0) ChildFail("setresuid");
  }
  OpenStdin(spec);  // as the step's own identity: it reads nothing the step could not
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ChildFail("no_new_privs");
  if (ctx.seccomp != nullptr && ctx.seccomp->Install() != 0) ChildFail("seccomp");
  // Last, right before exec: a sanitizer-built init already holds more address space than any
  // limit we set.
  if (spec.address_space_bytes())
    SetLimit(RLIMIT_AS, spec.address_space_bytes(), spec.address_space_bytes());
  for (const auto& path : p.candidates) {
    ::execve(path.c_str(), p.argv.data(), p.env.data());
  }
  ChildFail("exec");
}

struct ChildArgs {
  const StepSpec* spec;
  const StepContext* ctx;
  const Prepared* prepared;
  int out_fd, err_fd;
};

int ChildMain(void* arg) {
  const auto* a = static_cast<const ChildArgs*>(arg);
  ExecChild(*a->spec, *a->ctx, *a->prepared, a->out_fd, a->err_fd);
}

// Starts the step's process. It shares our memory until it execs (or fails and exits), while we
// wait: no page tables are copied and no page is copied on write, which with fork() cost the
// init more CPU per step than a simulator's whole start-up. The child therefore runs on a stack
// of its own and makes only system calls (ExecChild allocates nothing); we are single-threaded
// and handle no signal (SIGPIPE is ignored), so nothing else runs on our memory meanwhile.
pid_t StartChild(ChildArgs* args) {
  constexpr size_t kStackBytes = 256 * 1024;
  alignas(64) static char stack[kStackBytes];
  return ::clone(ChildMain, stack + kStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD, args);
}

}  // namespace

void KillLeftovers(const StepContext& ctx, pid_t step_group) {
  if (step_group > 0) ::kill(-step_group, SIGKILL);
  if (ctx.pid_namespace) {
    // We are pid 1 of the sandbox's namespace: every other process in it is a step's.
    ::kill(-1, SIGKILL);
  } else if (ctx.uid != 0) {
    // No pid namespace, but the steps run under a uid of their own: a helper with that uid
    // can signal exactly them (kill(-1) never signals the caller itself).
    pid_t helper = ::fork();
    if (helper == 0) {
      if (::setresgid(ctx.gid, ctx.gid, ctx.gid) == 0 &&
          ::setresuid(ctx.uid, ctx.uid, ctx.uid) == 0)
        ::kill(-1, SIGKILL);
      ::_exit(0);
    }
    if (helper > 0) ::waitpid(helper, nullptr, 0);
  }
  // Reap everything that was ours (in a pid namespace, orphans are re-parented to us).
  while (true) {
    pid_t r = ::waitpid(-1, nullptr, ctx.pid_namespace ? 0 : WNOHANG);
    if (r > 0) continue;
    if (r < 0 && errno == EINTR) continue;
    break;
  }
}

namespace {

// One output pipe of a step and what came back through it.
struct OutputPipe {
  int fd = -1;
  bool open = false;
  std::string data;
};

// A started step: its output pipes and pidfd, and what came back from it.
struct RunningStep {
  pid_t pid = -1;
  int pidfd = -1;
  uint64_t cap = 0;  // over both pipes together
  OutputPipe out, err;
  bool exited = false, timed_out = false, flooded = false, cpu_limited = false;
  std::chrono::milliseconds queue_wait{0};
  int status = 0;
  rusage usage{};
  char buf[65536];

  // Reads what a pipe holds now, up to the output cap.
  void Drain(OutputPipe& p) {
    while (p.open && !flooded) {
      ssize_t n = ::read(p.fd, buf, sizeof buf);
      if (n > 0) {
        const size_t used = out.data.size() + err.data.size();
        if (used + static_cast<size_t>(n) > cap) {
          p.data.append(buf, cap - used);
          flooded = true;
          return;
        }
        p.data.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) p.open = false;
      if (n < 0 && errno == EINTR) continue;
      return;  // EAGAIN: nothing more for now
    }
  }
  void DrainAll() {
    Drain(out);
    Drain(err);
  }

  // Collects output until the step exits, floods its cap, or uses its CPU time, or until its
  // wall time less its wait for a CPU reaches `backstop`, or its plain wall time `ceiling`.
  void Watch(Clock::time_point start, std::chrono::milliseconds backstop, Clock::time_point ceiling,
             CpuLimit cpu, RunQueueWait& queue) {
    while (!exited && !flooded) {
      const Clock::time_point deadline = std::min(ceiling, start + backstop + queue_wait);
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        timed_out = true;
        return;
      }
      pollfd fds[3];
      int nfds = 0;
      if (out.open) fds[nfds++] = {out.fd, POLLIN, 0};
      if (err.open) fds[nfds++] = {err.fd, POLLIN, 0};
      if (pidfd >= 0) fds[nfds++] = {pidfd, POLLIN, 0};
      // Without a pidfd the exit is noticed by polling waitpid every 5 ms.
      int wait_ms = pidfd >= 0 ? static_cast<int>(left) : std::min<int>(static_cast<int>(left), 5);
      if (cpu.Exceeded(&wait_ms)) {
        cpu_limited = true;
        return;
      }
      if (nfds > 0) {
        int rc = ::poll(fds, nfds, wait_ms);
        if (rc < 0 && errno != EINTR) return;
      } else {
        ::usleep(static_cast<useconds_t>(wait_ms) * 1000);
      }
      DrainAll();
      // Read once per wake-up, before the step can be reaped (the kernel says nothing after).
      queue_wait = std::chrono::milliseconds(queue.WaitedNs() / 1000000);
      if (::wait4(pid, &status, WNOHANG, &usage) == pid) {
        exited = true;
        DrainAll();  // what the step wrote just before exiting
      }
    }
  }

  // A step still running is killed (its process group too) and waited for.
  void Reap() {
    if (exited) return;
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
  }

  StepResult Result(Clock::time_point start, bool separate) {
    StepResult result;
    result.set_wall_ms(static_cast<uint32_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count()));
    result.set_run_queue_wait_ms(static_cast<uint32_t>(queue_wait.count()));
    result.set_max_rss_kb(static_cast<uint64_t>(usage.ru_maxrss));
    result.set_cpu_ms(static_cast<uint64_t>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000 +
                      static_cast<uint64_t>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) /
                          1000);
    result.set_output(std::move(out.data));
    if (separate) result.set_error_output(std::move(err.data));
    if (flooded) {
      result.set_outcome(StepResult::OUTPUT_LIMIT);
    } else if (timed_out) {
      result.set_outcome(StepResult::TIMED_OUT);
    } else if (cpu_limited) {
      result.set_outcome(StepResult::CPU_LIMIT);
    } else if (WIFSIGNALED(status)) {
      result.set_outcome(StepResult::SIGNALED);
      result.set_signal(WTERMSIG(status));
    } else {
      result.set_exit_code(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
      result.set_outcome(StepResult::EXITED);
    }
    return result;
  }
};

StepResult StartFailed(const std::string& why) {
  StepResult result;
  result.set_outcome(StepResult::START_FAILED);
  result.set_output(why);
  return result;
}

}  // namespace

StepResult RunStep(const StepSpec& spec, const StepContext& ctx) {
  if (spec.argv_size() == 0) return StartFailed("empty command");
  Prepared prepared = Prepare(spec, ctx);
  const bool separate = spec.separate_stderr();
  int out_pipe[2], err_pipe[2] = {-1, -1};
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    return StartFailed(std::string("pipe: ") + std::strerror(errno));
  if (separate && ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return StartFailed(std::string("pipe: ") + std::strerror(errno));
  }
  auto close_all = [&] {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      if (fd >= 0) ::close(fd);
  };
  auto start = Clock::now();
  ChildArgs args{&spec, &ctx, &prepared, out_pipe[1], separate ? err_pipe[1] : out_pipe[1]};
  const pid_t pid = StartChild(&args);
  if (pid < 0) {
    close_all();
    return StartFailed(std::string("clone: ") + std::strerror(errno));
  }
  ::setpgid(pid, pid);  // also done in the child; whichever runs first wins the race
  ::close(out_pipe[1]);
  out_pipe[1] = -1;
  if (separate) {
    ::close(err_pipe[1]);
    err_pipe[1] = -1;
  }

  auto step = std::make_unique<RunningStep>();
  step->pid = pid;
  step->out = {out_pipe[0], true, {}};
  if (separate) step->err = {err_pipe[0], true, {}};
  for (int fd : {out_pipe[0], err_pipe[0]})
    if (fd >= 0) ::fcntl(fd, F_SETFL, O_NONBLOCK);
  step->pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  step->cap = spec.max_output_bytes() ? spec.max_output_bytes() : (1u << 20);
  RunQueueWait queue(pid);
  step->Watch(start, StepBackstop(spec), start + StepWallCeiling(spec),
              CpuLimit(pid, spec.cpu_limit_ms()), queue);
  step->Reap();
  KillLeftovers(ctx, pid);
  if (step->pidfd >= 0) ::close(step->pidfd);
  close_all();
  return step->Result(start, separate);
}

}  // namespace evald::sandbox
