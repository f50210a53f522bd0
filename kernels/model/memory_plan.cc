#include "kernels/model/memory_plan.h"

#include <algorithm>

#include "kernels/quant/blocks.h"

namespace evald::kernels {

StatusOr<MemoryPlan> PlanMemory(const GgufFile& file, int positions, int batch, KvCacheType kv,
                                int threads) {
  if (positions < 1 || batch < 1 || threads < 1)
    return Status::InvalidArgument("positions, batch and threads must be positive");
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
  plan.kv_cache = KvCacheBytes(c, kv, positions, batch);
  // The same cache with each sliding layer holding its window only.
  int64_t full_positions_equivalent = 0;
  for (const LayerShape& s : c.layer)
    full_positions_equivalent +=
        static_cast<int64_t>(s.kv_dim()) *
        (s.sliding ? std::min<int64_t>(positions, c.sliding_window) : positions);
  const int64_t values = 2LL * batch * full_positions_equivalent;
  plan.kv_cache_windowed = kv == KvCacheType::kQ8_0
                               ? values / kQK * static_cast<int64_t>(sizeof(BlockQ8_0))
                               : values * static_cast<int64_t>(sizeof(float));
  // LlamaSession's buffers (vectors of max(batch, prefill chunk)), logits, scores per thread.
  const int64_t b = std::max(batch, LlamaSession::kPrefillChunk);
  plan.scratch =
      4 * (b * (2LL * c.dim + 2LL * c.max_q_dim + 2LL * c.max_kv_dim + 2LL * c.max_hidden) +
           static_cast<int64_t>(batch) * c.vocab + c.max_rope_dims +
           static_cast<int64_t>(threads) * positions);
  return plan;
}

}  // namespace evald::kernels
