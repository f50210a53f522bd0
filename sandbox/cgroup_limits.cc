#include "sandbox/cgroup_limits.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/file_io.h"

namespace evald {

namespace {

constexpr const char* kRoot = "/sys/fs/cgroup";

bool WriteValue(const std::string& path, const std::string& value) {
  std::ofstream f(path);
  if (!f) return false;
  f << value;
  f.flush();
  return static_cast<bool>(f);
}

// The path of this process's cgroup for a v1 controller ("memory") or v2 ("").
std::string OwnCgroup(const std::string& controller) {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line)) {
    // "hierarchy-ID:controller-list:path"
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string ctrls = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (controller.empty()
            ? (line.substr(0, a) == "0" && ctrls.empty())
            : (("," + ctrls + ",").find("," + controller + ",") != std::string::npos))
      return path == "/" ? "" : path;
  }
  return "";
}

std::string MakeDir(const std::string& parent, const std::string& name) {
  std::string dir = parent + "/" + name;
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return "";
  return dir;
}

uint64_t ReadOomKill(const std::string& file) {
  std::ifstream f(file);
  std::string key;
  uint64_t value = 0;
  while (f >> key >> value) {
    if (key == "oom_kill") return value;
  }
  return 0;
}

// A daemon killed with kill -9 cannot remove its workers' cgroups; their processes died with
// it (PR_SET_PDEATHSIG). Remove the empty cgroups of evald processes that no longer exist.
void RemoveStaleCgroups(const std::string& parent) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("evald-", 0) != 0) continue;
    size_t dash = name.find('-', 6);
    std::string pid = name.substr(6, dash == std::string::npos ? std::string::npos : dash - 6);
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (IsDirectory("/proc/" + pid)) continue;
    ::rmdir(entry.path().c_str());  // fails harmlessly while processes remain
  }
}

}  // namespace

std::unique_ptr<CgroupLimits> CgroupLimits::Create(const std::string& name, uint64_t memory_bytes,
                                                   uint32_t max_pids, std::string* why) {
  std::unique_ptr<CgroupLimits> cg(new CgroupLimits());
  // cgroup v2 (unified) with the controllers we need.
  if (IsRegularFile(std::string(kRoot) + "/cgroup.controllers")) {
    std::string parent = std::string(kRoot) + OwnCgroup("");
    RemoveStaleCgroups(parent);
    // Enabling controllers for children fails when our cgroup also holds processes (the "no
    // internal processes" rule); then there is nothing we may limit and we say so.
    WriteValue(parent + "/cgroup.subtree_control", "+memory +pids");
    std::string dir = MakeDir(parent, name);
    if (!dir.empty() && IsRegularFile(dir + "/memory.max") && IsRegularFile(dir + "/pids.max") &&
        WriteValue(dir + "/memory.max", std::to_string(memory_bytes)) &&
        WriteValue(dir + "/pids.max", std::to_string(max_pids))) {
      WriteValue(dir + "/memory.swap.max", "0");
      cg->version_ = "v2";
      cg->memory_dir_ = dir;
      cg->pids_dir_ = dir;
      return cg;
    }
    if (!dir.empty()) ::rmdir(dir.c_str());
    *why = "cgroup v2 controllers memory/pids not delegated to " + parent;
    return nullptr;
  }
  // cgroup v1: separate memory and pids hierarchies.
  std::string mem_root = std::string(kRoot) + "/memory", pids_root = std::string(kRoot) + "/pids";
  if (IsDirectory(mem_root)) {
    RemoveStaleCgroups(mem_root + OwnCgroup("memory"));
    std::string dir = MakeDir(mem_root + OwnCgroup("memory"), name);
    if (!dir.empty() && WriteValue(dir + "/memory.limit_in_bytes", std::to_string(memory_bytes))) {
      cg->memory_dir_ = dir;
    } else if (!dir.empty()) {
      ::rmdir(dir.c_str());
    }
  }
  if (IsDirectory(pids_root)) {
    RemoveStaleCgroups(pids_root + OwnCgroup("pids"));
    std::string dir = MakeDir(pids_root + OwnCgroup("pids"), name);
    if (!dir.empty() && WriteValue(dir + "/pids.max", std::to_string(max_pids))) {
      cg->pids_dir_ = dir;
    } else if (!dir.empty()) {
      ::rmdir(dir.c_str());
    }
  }
  if (cg->memory_dir_.empty() && cg->pids_dir_.empty()) {
    *why = "no writable cgroup hierarchy under /sys/fs/cgroup";
    return nullptr;
  }
  cg->version_ = "v1";
  return cg;
}

CgroupLimits::~CgroupLimits() {
  // Only empty cgroups can be removed; the worker's processes are gone by now.
  if (!memory_dir_.empty()) ::rmdir(memory_dir_.c_str());
  if (!pids_dir_.empty() && pids_dir_ != memory_dir_) ::rmdir(pids_dir_.c_str());
}

bool CgroupLimits::AddProcess(pid_t pid) {
  bool ok = true;
  if (!memory_dir_.empty()) ok &= WriteValue(memory_dir_ + "/cgroup.procs", std::to_string(pid));
  if (!pids_dir_.empty() && pids_dir_ != memory_dir_)
    ok &= WriteValue(pids_dir_ + "/cgroup.procs", std::to_string(pid));
  return ok;
}

uint64_t CgroupLimits::OomKills() const {
  if (memory_dir_.empty()) return 0;
  if (version_ == "v2") return ReadOomKill(memory_dir_ + "/memory.events");
  return ReadOomKill(memory_dir_ + "/memory.oom_control");
}

}  // namespace evald
