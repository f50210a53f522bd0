#include "kernels/model/memory_plan.h"

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

}  // namespace evald::kernels
