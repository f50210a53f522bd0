// A decoder's configuration from a GGUF file's metadata (general.architecture and its keys),
// every size validated; one LayerShape per layer, since gemma4's sliding and full layers
// differ in head size, KV heads and RoPE. What an architecture's variant needs that the core does
// not compute (gemma4's KV sharing, per-layer embeddings, experts, vision) is refused by name.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "kernels/gguf/gguf_file.h"

namespace evald::kernels {

enum class RopeStyle { kAdjacentPairs, kHalfSplit };  // ggml's "normal" and "neox"
enum class FfnActivation { kSilu, kGelu };

// What may differ from layer to layer (gemma4: sliding and full layers have different head
// sizes, KV head counts, RoPE dimensions and bases; other architectures repeat one shape).
struct LayerShape {
  int n_heads = 0, n_kv_heads = 0, head_dim = 0, rope_dims = 0, hidden = 0;
  bool sliding = false;  // attends to the last config.sliding_window positions only
  float rope_base = 10000.0f;
  float rope_scale = 1;  // linear RoPE scaling: positions times this
  int q_dim() const { return n_heads * head_dim; }
  int kv_dim() const { return n_kv_heads * head_dim; }
};

struct LlamaConfig {
  std::string architecture;
  RopeStyle rope_style = RopeStyle::kAdjacentPairs;
  FfnActivation activation = FfnActivation::kSilu;
  float embedding_scale = 1.0f;  // gemma multiplies the embeddings by sqrt(dim)
  int dim = 0, n_layers = 0, vocab = 0, context = 0;
  // The file's head count and (full layers') head size and RoPE dimensions; every layer's own,
  // KV heads and FFN size included, are in `layer`.
  int n_heads = 0, head_dim = 0, rope_dims = 0;
  float rms_eps = 1e-5f, rope_base = 10000.0f;
  float query_scale = 0;          // multiplies q.k (1/sqrt(head_dim), or Gemma 27B's rule)
  float attn_softcap = 0;         // gemma2: scores -> cap * tanh(scores / cap); 0 = off
  float final_softcap = 0;        // gemma2: the same on the logits
  int sliding_window = 0;         // sliding layers attend to the last `sliding_window` positions
  bool post_norms = false;        // gemma2/3: RMSNorm of the attention and FFN outputs
  bool qk_norm = false;           // gemma3: per-head RMSNorm of q and k before RoPE
  float rope_base_local = 0;      // gemma3: RoPE base of the sliding layers (0 = rope_base)
  float rope_scale_global = 1;    // linear RoPE scaling (position x this) of the global layers
  bool value_norm = false;        // gemma4: weightless RMSNorm of each value head
  std::vector<LayerShape> layer;  // one per layer
  // The largest of each over the layers (scratch sizes).
  int max_q_dim = 0, max_kv_dim = 0, max_hidden = 0, max_rope_dims = 0;
};

// The configuration `file` describes, validated as LlamaModel::Load validates it, without
// reading a weight.
StatusOr<LlamaConfig> ReadLlamaConfig(const GgufFile& file);

}  // namespace evald::kernels
