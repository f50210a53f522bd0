// What a checkpoint will hold in memory, from its metadata and tensor table alone (no weight is
// read): so that a user knows before loading a 31B file whether it fits.
#pragma once

#include <cstdint>
#include <memory>

#include "base/status.h"
#include "kernels/gguf/gguf_file.h"
#include "kernels/model/llama_model.h"

namespace evald::kernels {

struct MemoryPlan {
  LlamaConfig config;
  int64_t parameters = 0;  // elements of every tensor
  int64_t weights = 0;     // the file's tensor data (memory-mapped, resident once read)
  // The KV cache: every position on full layers (a shared prompt's once), a ring of the window
  // on sliding layers.
  int64_t kv_cache = 0;
  int64_t scratch = 0;  // a session's activations, logits and attention scores
  int64_t total() const { return weights + kv_cache + scratch; }
};

// For `batch` sequences of `positions` each, the cache kept as `kv`, the first `shared_prompt`
// positions a prompt all sequences share (held once, KvCacheBytes).
StatusOr<MemoryPlan> PlanMemory(const GgufFile& file, int positions, int batch, KvCacheType kv,
                                int threads = 1, int shared_prompt = 0);

// Whether a session of `batch` sequences of up to `positions` each (the first `shared_prompt` a
// prompt they share), its cache kept as `kv`, fits `budget_bytes` once every sequence has
// reached `positions`: the KV cache that would then be committed (KvCacheBytes) and the scratch.
// budget_bytes 0: the memory this machine has available now (AvailableMemoryBytes), unchecked
// where that cannot be read. ResourceExhausted, with the figures and what would lower them,
// where it does not fit: a session that runs out of memory half way is killed, not refused.
Status CheckSessionMemory(const LlamaConfig& config, KvCacheType kv, int positions, int batch,
                          int shared_prompt, int threads, int64_t budget_bytes = 0);

// A session (LlamaSession's arguments) once CheckSessionMemory finds it fits; ResourceExhausted
// where it does not, or where its cache cannot be reserved.
StatusOr<std::unique_ptr<LlamaSession>> OpenSession(const LlamaModel& model, int positions,
                                                    const KernelTable& kernels, int batch,
                                                    ThreadPool* pool, KvCacheType kv,
                                                    int shared_prompt, int64_t budget_bytes = 0);

}  // namespace evald::kernels
