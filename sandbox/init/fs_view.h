// The filesystem an untrusted step sees, built inside the sandbox's own mount namespace:
//   /usr (and the /bin, /lib ... links or binds a merged-/usr system has) read-only,
//   /etc with only the dynamic-loader cache and the alternatives links,
//   /dev with null, zero, full, random, urandom, /proc of the sandbox's pid namespace,
//   /work: a size-limited tmpfs made fresh for every job, and /tmp pointing into it.
// Nothing else of the host exists there: no home directories, no project checkout, no /etc
// secrets, no sockets. The root itself is read-only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace evald::sandbox {

inline constexpr const char* kScratchDir = "/work";

// Builds the view and pivots into it. Returns an empty string or an error description.
// extra_readonly: further host directories to expose read-only at the same path.
std::string BuildFsView(const std::vector<std::string>& extra_readonly, bool mount_proc,
                        bool* proc_mounted);

// A fresh tmpfs at kScratchDir owned by uid:gid, at most `bytes` large.
std::string MountScratch(uint32_t uid, uint32_t gid, uint64_t bytes);
void UnmountScratch();

}  // namespace evald::sandbox
