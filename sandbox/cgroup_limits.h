// A cgroup per sandbox worker: a memory ceiling (which also covers the tmpfs scratch) and a pids
// ceiling (fork bombs). cgroup v2 when the unified hierarchy has the controllers, else v1's
// memory and pids hierarchies; absent when neither is writable (unprivileged containers).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

namespace evald {

class CgroupLimits {
 public:
  // nullptr when no cgroup can be made here; `why` then says what was missing.
  static std::unique_ptr<CgroupLimits> Create(const std::string& name, uint64_t memory_bytes,
                                              uint32_t max_pids, std::string* why);
  ~CgroupLimits();
  CgroupLimits(const CgroupLimits&) = delete;
  CgroupLimits& operator=(const CgroupLimits&) = delete;

  bool AddProcess(pid_t pid);
  // Number of OOM kills in this cgroup so far.
  uint64_t OomKills() const;

  const std::string& version() const { return version_; }
  bool memory() const { return !memory_dir_.empty(); }
  bool pids() const { return !pids_dir_.empty(); }

 private:
  CgroupLimits() = default;
  std::string version_;
  std::string memory_dir_;  // v2: the one directory for both
  std::string pids_dir_;
};

}  // namespace evald
