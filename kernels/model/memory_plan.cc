#include "kernels/model/memory_plan.h"

#include <cstdio>
#include <new>
#include <string>

#include "base/memory_info.h"
#include "kernels/ops/thread_pool.h"

namespace evald::kernels {

StatusOr<MemoryPlan> PlanMemory(const GgufFile& file, int positions, int batch, KvCacheType kv,
                                int threads, int shared_prompt) {
  if (positions < 1 || batch < 1 || threads < 1)
    return Status::InvalidArgument("positions, batch and threads must be positive");
  if (shared_prompt < 0 || shared_prompt >= positions)
    return Status::InvalidArgument("the prompt must be shorter than the positions");
  auto config = ReadLlamaConfig(file);
  if (!config.ok()) return config.status();
  EVALD_RETURN_IF_ERROR(CheckKvCacheType(*config, kv));
  MemoryPlan plan;
  plan.config = std::move(*config);
  const LlamaConfig& c = plan.config;
  for (const GgufTensor& t : file.tensors()) {
    plan.parameters += static_cast<int64_t>(t.elements());
    plan.weights += static_cast<int64_t>(t.bytes);
  }
  plan.kv_cache = KvCacheBytes(c, kv, positions, batch, shared_prompt);
  plan.scratch = LlamaSession::ScratchBytes(c, batch, positions, threads);
  return plan;
}

Status CheckSessionMemory(const LlamaConfig& config, KvCacheType kv, int positions, int batch,
                          int shared_prompt, int threads, int64_t budget_bytes) {
  const int64_t budget = budget_bytes > 0 ? budget_bytes : AvailableMemoryBytes();
  if (budget <= 0) return Status::Ok();
  const int64_t cache = KvCacheBytes(config, kv, positions, batch, shared_prompt);
  const int64_t scratch = LlamaSession::ScratchBytes(config, batch, positions, threads);
  if (cache + scratch <= budget) return Status::Ok();
  auto gb = [](int64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GB", static_cast<double>(bytes) / 1e9);
    return std::string(text);
  };
  return Status::ResourceExhausted(
      std::to_string(batch) + " sample(s) of up to " + std::to_string(positions) +
      " positions need up to " + gb(cache) + " of KV cache (" + KvCacheTypeName(kv) + ") and " +
      gb(scratch) + " of scratch, and " + gb(budget) +
      (budget_bytes > 0 ? " is the budget" : " is available") +
      ": ask for fewer samples or tokens" +
      (kv == KvCacheType::kF32 ? ", or a q8_0 KV cache (a quarter of the memory)" : ""));
}

StatusOr<std::unique_ptr<LlamaSession>> OpenSession(const LlamaModel& model, int positions,
                                                    const KernelTable& kernels, int batch,
                                                    ThreadPool* pool, KvCacheType kv,
                                                    int shared_prompt, int64_t budget_bytes) {
  const int threads = pool ? pool->threads() : 1;
  EVALD_RETURN_IF_ERROR(CheckSessionMemory(model.config(), kv, positions, batch, shared_prompt,
                                           threads, budget_bytes));
  try {
    return std::make_unique<LlamaSession>(model, positions, kernels, batch, pool, kv);
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("no memory for a session of " + std::to_string(batch) +
                                     " sample(s) of " + std::to_string(positions) + " positions");
  }
}

}  // namespace evald::kernels
