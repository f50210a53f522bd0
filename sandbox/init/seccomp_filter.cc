#include "sandbox/init/seccomp_filter.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>

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

}  // namespace

int InstallSeccompDenyList() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return -ENOMEM;
  int rc = 0;
  for (const char* name : kDenied) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    if (rc < 0) break;
  }
  // clone() may create threads and processes but no namespaces.
  const unsigned long kNamespaceFlags[] = {CLONE_NEWNS,    CLONE_NEWPID, CLONE_NEWNET,
                                           CLONE_NEWIPC,   CLONE_NEWUTS, CLONE_NEWUSER,
                                           CLONE_NEWCGROUP};
  for (unsigned long flag : kNamespaceFlags) {
    if (rc < 0) break;
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                          SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
  }
  // clone3 passes its flags in memory a filter cannot read: make it look absent so that the
  // C library falls back to clone(), which the rules above can inspect.
  if (rc >= 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  if (rc >= 0) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  return rc < 0 ? rc : 0;
}

}  // namespace evald::sandbox
