#include "sandbox/init/fs_view.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace evald::sandbox {

namespace {

constexpr const char* kNewRoot = "/tmp";  // a tmpfs is mounted over it in our namespace only

std::string Errno(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

// Bind-mounts `src` onto `dst` and makes the bind read-only, nosuid, nodev.
std::string BindReadOnly(const std::string& src, const std::string& dst) {
  if (::mount(src.c_str(), dst.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
    return Errno("bind " + src);
  unsigned long flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV;
  if (::mount(nullptr, dst.c_str(), nullptr, flags, nullptr) != 0)
    return Errno("read-only remount of " + dst);
  return "";
}

std::string MakeMountPoint(const std::string& path, bool is_dir) {
  if (is_dir) {
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return Errno("mkdir " + path);
    return "";
  }
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0444);
  if (fd < 0) return Errno("create " + path);
  ::close(fd);
  return "";
}

// Exposes host path `path` at the same place in the new root: links are re-created as links
// (merged /usr: /bin -> usr/bin), directories and files are bound read-only.
std::string Expose(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "";  // absent on this host: nothing to expose
  std::string dst = std::string(kNewRoot) + path;
  // Parents of nested paths (e.g. /etc/alternatives) must exist in the new root.
  for (size_t pos = 1; (pos = dst.find('/', pos + 1)) != std::string::npos;) {
    std::string parent = dst.substr(0, pos);
    if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) return Errno("mkdir " + parent);
  }
  if (S_ISLNK(st.st_mode)) {
    char target[4096];
    ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
    if (n < 0) return Errno("readlink " + path);
    target[n] = '\0';
    if (::symlink(target, dst.c_str()) != 0 && errno != EEXIST) return Errno("symlink " + dst);
    return "";
  }
  if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) return "";
  std::string err = MakeMountPoint(dst, S_ISDIR(st.st_mode));
  if (!err.empty()) return err;
  return BindReadOnly(path, dst);
}

}  // namespace

std::string BuildFsView(const std::vector<std::string>& extra_readonly, bool mount_proc,
                        bool* proc_mounted) {
  *proc_mounted = false;
  // Nothing we mount may propagate back to the host.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return Errno("make mounts private");
  if (::mount("evald-root", kNewRoot, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755") != 0)
    return Errno("mount root tmpfs");

  const char* const kSystemPaths[] = {"/usr",
                                      "/bin",
                                      "/sbin",
                                      "/lib",
                                      "/lib32",
                                      "/lib64",
                                      "/libx32",
                                      "/etc/alternatives",
                                      "/etc/ld.so.cache",
                                      "/etc/ld.so.conf",
                                      "/etc/ld.so.conf.d"};
  for (const char* p : kSystemPaths) {
    std::string err = Expose(p);
    if (!err.empty()) return err;
  }
  for (const auto& p : extra_readonly) {
    if (p.empty() || p[0] != '/' || p.find("..") != std::string::npos) continue;
    std::string err = Expose(p);
    if (!err.empty()) return err;
  }

  // /dev: a small tmpfs holding only the harmless character devices.
  std::string dev = std::string(kNewRoot) + "/dev";
  if (::mkdir(dev.c_str(), 0755) != 0) return Errno("mkdir /dev");
  if (::mount("evald-dev", dev.c_str(), "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755") != 0)
    return Errno("mount /dev tmpfs");
  for (const char* d : {"null", "zero", "full", "random", "urandom"}) {
    std::string src = std::string("/dev/") + d, dst = dev + "/" + d;
    std::string err = MakeMountPoint(dst, false);
    if (!err.empty()) return err;
    if (::mount(src.c_str(), dst.c_str(), nullptr, MS_BIND, nullptr) != 0)
      return Errno("bind " + src);
  }
  if (::symlink("/proc/self/fd", (dev + "/fd").c_str()) != 0) return Errno("symlink /dev/fd");
  ::symlink("/proc/self/fd/0", (dev + "/stdin").c_str());
  ::symlink("/proc/self/fd/1", (dev + "/stdout").c_str());
  ::symlink("/proc/self/fd/2", (dev + "/stderr").c_str());

  std::string proc = std::string(kNewRoot) + "/proc";
  if (::mkdir(proc.c_str(), 0555) != 0) return Errno("mkdir /proc");
  if (mount_proc) {
    if (::mount("proc", proc.c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0) {
      *proc_mounted = true;
      // The host's boot parameters and identity are not the design's business: an empty file
      // over each. Where a mask is not allowed (some unprivileged user namespaces), /proc goes
      // rather than leaving the facts readable.
      for (const char* masked : {"/cmdline", "/sys/kernel/random/boot_id", "/bootconfig"}) {
        std::string target = proc + masked;
        struct stat st {};
        if (::stat(target.c_str(), &st) != 0) continue;
        if (::mount("/dev/null", target.c_str(), nullptr, MS_BIND, nullptr) != 0) {
          ::umount2(proc.c_str(), MNT_DETACH);
          *proc_mounted = false;
          break;
        }
      }
    }
  }
  std::string work = std::string(kNewRoot) + kScratchDir;
  if (::mkdir(work.c_str(), 0755) != 0) return Errno("mkdir /work");
  if (::symlink("work/.tmp", (std::string(kNewRoot) + "/tmp").c_str()) != 0)
    return Errno("symlink /tmp");

  // Enter the new root; the old one is detached and unreachable from here on.
  if (::chdir(kNewRoot) != 0) return Errno("chdir new root");
  if (::syscall(SYS_pivot_root, ".", ".") != 0) return Errno("pivot_root");
  if (::umount2(".", MNT_DETACH) != 0) return Errno("detach old root");
  if (::chdir("/") != 0) return Errno("chdir /");
  if (::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
              nullptr) != 0)
    return Errno("read-only root");
  return "";
}

std::string MountScratch(uint32_t uid, uint32_t gid, uint64_t bytes) {
  std::string opts = "size=" + std::to_string(bytes) +
                     ",nr_inodes=16384,mode=0755,uid=" + std::to_string(uid) +
                     ",gid=" + std::to_string(gid);
  if (::mount("evald-work", kScratchDir, "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) != 0)
    return Errno("mount scratch tmpfs");
  return "";
}

void UnmountScratch() {
  ::umount2(kScratchDir, MNT_DETACH);
}

}  // namespace evald::sandbox
