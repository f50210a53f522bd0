#include "sandbox/init/seccomp_filter.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace evald::sandbox {

namespace {

// Calls untrusted code never needs. Names libseccomp does not know on this architecture
// resolve to __NR_SCMP_ERROR and are skipped.
const char* const kDenied[] = {
    // networking (the net namespace is empty too; this keeps even AF_UNIX out)
    "socket",
    "socketpair",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    "sendto",
    "sendmsg",
    "sendmmsg",
    "recvfrom",
    "recvmsg",
    "recvmmsg",
    "getsockopt",
    "setsockopt",
    // System V and POSIX IPC: objects outlive the process that made them, so a job could leave
    // state (and memory charged to the worker) for the jobs after it
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "ipc",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    // tracing and other processes' memory
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    // mounts, roots, namespaces
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "mount_setattr",
    "name_to_handle_at",
    "open_by_handle_at",
    // kernel interfaces
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "quotactl",
    "lookup_dcookie",
    "vhangup",
    "iopl",
    "ioperm",
    "fanotify_init",
    "add_key",
    "request_key",
    "keyctl",
    "mknod",
    "mknodat",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    "personality",
    "uselib",
    "nfsservctl",
    "_sysctl",
};

// Everything an untrusted step may call: the calls iverilog, ivlpp, ivl, vvp, verilator
// (perl, make, g++, cc1plus, as, ld) and the simulation binaries were seen making under strace,
// and the ordinary file, memory, process, time and signal calls around them that a tool version
// may use instead (statx for newfstatat, clone for vfork, ...). Any other call fails with
// ENOSYS ("not implemented"), which programs treat as a missing feature and work around.
const char* const kAllowed[] = {
    // files and descriptors
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "pwrite64",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "open",
    "openat",
    "openat2",
    "creat",
    "close",
    "close_range",
    "lseek",
    "dup",
    "dup2",
    "dup3",
    "pipe",
    "pipe2",
    "fcntl",
    "flock",
    "fsync",
    "fdatasync",
    "sync_file_range",
    "truncate",
    "ftruncate",
    "fallocate",
    "fadvise64",
    "readahead",
    "sendfile",
    "copy_file_range",
    "splice",
    "tee",
    "ioctl",
    "stat",
    "fstat",
    "lstat",
    "newfstatat",
    "statx",
    "statfs",
    "fstatfs",
    "access",
    "faccessat",
    "faccessat2",
    "getdents",
    "getdents64",
    "getcwd",
    "chdir",
    "fchdir",
    "rename",
    "renameat",
    "renameat2",
    "mkdir",
    "mkdirat",
    "rmdir",
    "link",
    "linkat",
    "unlink",
    "unlinkat",
    "symlink",
    "symlinkat",
    "readlink",
    "readlinkat",
    "chmod",
    "fchmod",
    "fchmodat",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "umask",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    "poll",
    "ppoll",
    "select",
    "pselect6",
    "epoll_create",
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "eventfd",
    "eventfd2",
    "timerfd_create",
    "timerfd_settime",
    "timerfd_gettime",
    "signalfd",
    "signalfd4",
    "memfd_create",
    // memory
    "brk",
    "mmap",
    "munmap",
    "mremap",
    "mprotect",
    "msync",
    "mincore",
    "madvise",
    "membarrier",
    "get_mempolicy",
    "set_mempolicy",
    "mbind",
    // processes and threads (clone: see the namespace rule below)
    "fork",
    "vfork",
    "execve",
    "execveat",
    "exit",
    "exit_group",
    "wait4",
    "waitid",
    "kill",
    "tkill",
    "tgkill",
    "getpid",
    "getppid",
    "gettid",
    "getpgrp",
    "getpgid",
    "setpgid",
    "getsid",
    "setsid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getresuid",
    "getresgid",
    "getgroups",
    "setuid",
    "setgid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "capget",
    "prctl",
    "arch_prctl",
    "set_tid_address",
    "set_robust_list",
    "get_robust_list",
    "futex",
    "futex_waitv",
    "rseq",
    "sched_yield",
    "sched_getaffinity",
    "sched_setaffinity",
    "sched_getparam",
    "sched_getscheduler",
    "sched_get_priority_max",
    "sched_get_priority_min",
    "getpriority",
    "setpriority",
    "ioprio_get",
    "getcpu",
    "getrlimit",
    "setrlimit",
    "prlimit64",
    "getrusage",
    "times",
    "sysinfo",
    "uname",
    "getrandom",
    // signals and time
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "rt_sigpending",
    "rt_sigtimedwait",
    "rt_sigqueueinfo",
    "rt_sigsuspend",
    "sigaltstack",
    "pause",
    "alarm",
    "nanosleep",
    "clock_nanosleep",
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "time",
    "getitimer",
    "setitimer",
    "timer_create",
    "timer_settime",
    "timer_gettime",
    "timer_getoverrun",
    "timer_delete",
};

// One unconditional rule per named call; names libseccomp does not know here are skipped.
template <size_t N>
int AddRules(scmp_filter_ctx ctx, const char* const (&names)[N], uint32_t action) {
  for (const char* name : names) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;
    if (int rc = seccomp_rule_add(ctx, action, nr, 0); rc < 0) return rc;
  }
  return 0;
}

// Every rule of the allow-list in `ctx`; 0 or a negative errno.
int AddAllRules(scmp_filter_ctx ctx) {
  int rc = AddRules(ctx, kAllowed, SCMP_ACT_ALLOW);
  // The refused calls answer EPERM, as they did under the deny-list: a tool that probes one
  // (socket() for a name service, say) sees "not permitted", not "not implemented".
  if (rc >= 0) rc = AddRules(ctx, kDenied, SCMP_ACT_ERRNO(EPERM));
  // clone() may create threads and processes but no namespaces: allowed when no namespace flag
  // is set, EPERM for each flag (disjoint conditions).
  const unsigned long kNamespaceFlags[] = {CLONE_NEWNS,    CLONE_NEWPID, CLONE_NEWNET,
                                           CLONE_NEWIPC,   CLONE_NEWUTS, CLONE_NEWUSER,
                                           CLONE_NEWCGROUP};
  unsigned long all_flags = 0;
  for (unsigned long flag : kNamespaceFlags) {
    all_flags |= flag;
    if (rc >= 0)
      rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                            SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
  }
  // clone3 passes its flags in memory a filter cannot read: it is on neither list, so it looks
  // absent (ENOSYS, the default) and the C library falls back to clone(), which the rules above
  // inspect. (libseccomp refuses a rule whose action equals the default one.)
  if (rc >= 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                          SCMP_A0(SCMP_CMP_MASKED_EQ, all_flags, 0));
  return rc;
}

// The program libseccomp would load for `ctx`, read back through a memory file.
int ExportProgram(scmp_filter_ctx ctx, std::vector<sock_filter>* code) {
  const int fd = ::memfd_create("evald-seccomp", MFD_CLOEXEC);
  if (fd < 0) return -errno;
  int rc = seccomp_export_bpf(ctx, fd);
  const off_t size = rc < 0 ? 0 : ::lseek(fd, 0, SEEK_END);
  if (rc >= 0 &&
      (size <= 0 || size % sizeof(sock_filter) != 0 || size / sizeof(sock_filter) > BPF_MAXINSNS))
    rc = -EINVAL;
  if (rc >= 0) {
    code->resize(static_cast<size_t>(size) / sizeof(sock_filter));
    if (::pread(fd, code->data(), static_cast<size_t>(size), 0) != size) rc = -EIO;
  }
  ::close(fd);
  if (rc < 0) code->clear();
  return rc;
}

}  // namespace

int SeccompProgram::Compile() {
  code_.clear();
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(ENOSYS));
  if (!ctx) return -ENOMEM;
  int rc = AddAllRules(ctx);
  if (rc >= 0) rc = ExportProgram(ctx, &code_);
  seccomp_release(ctx);
  return rc < 0 ? rc : 0;
}

int SeccompProgram::Install() const {
  if (code_.empty()) return -EINVAL;
  sock_fprog program{static_cast<unsigned short>(code_.size()),
                     const_cast<sock_filter*>(code_.data())};
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) != 0) return -errno;
  return 0;
}

}  // namespace evald::sandbox
