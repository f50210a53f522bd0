// What memory this machine has for new work, as the kernel reports it.
#pragma once

#include <cstdint>

namespace evald {

// MemAvailable of /proc/meminfo in bytes: memory that can be handed out without swapping (free
// memory plus the page cache that can be dropped). 0 where it cannot be read.
int64_t AvailableMemoryBytes();

}  // namespace evald
