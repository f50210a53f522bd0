// Decoder-only transformers over a GGUF checkpoint: `llama` (Llama 2/3, Mistral, CodeLlama,
// DeepSeek-Coder layouts), `qwen2` (QKV biases, half-split RoPE) and `gemma` (scaled embeddings,
// GELU, head size from key_length). Configuration and weights are validated at load; the decoder
// keeps a KV cache and computes next-token logits one position at a time. The model code calls
// kernels only through MatVec and the small ops below, so other kernel paths can replace them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "evald/common/status.h"
#include "kernels/gguf/gguf_file.h"
#include "kernels/ops/matvec.h"
#include "kernels/ops/thread_pool.h"

namespace evald::kernels {

enum class RopeStyle { kAdjacentPairs, kHalfSplit };  // ggml's "normal" and "neox"
enum class FfnActivation { kSilu, kGelu };

struct LlamaConfig {
  std::string architecture;
  RopeStyle rope_style = RopeStyle::kAdjacentPairs;
  FfnActivation activation = FfnActivation::kSilu;
  float embedding_scale = 1.0f;  // gemma multiplies the embeddings by sqrt(dim)
  int dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, hidden = 0, vocab = 0, context = 0;
  int head_dim = 0, rope_dims = 0;
  float rms_eps = 1e-5f, rope_base = 10000.0f;
};

struct LlamaLayer {
  const float* attn_norm = nullptr;
  const float* ffn_norm = nullptr;
  const float* bq = nullptr;  // qwen2's attention biases (nullptr when absent)
  const float* bk = nullptr;
  const float* bv = nullptr;
  WeightMatrix wq, wk, wv, wo, w_gate, w_up, w_down;
};

class LlamaModel {
 public:
  static StatusOr<std::unique_ptr<LlamaModel>> Load(const std::string& path);
  static StatusOr<std::unique_ptr<LlamaModel>> FromFile(std::unique_ptr<GgufFile> file);

  const LlamaConfig& config() const { return config_; }
  const GgufFile& file() const { return *file_; }
  const std::vector<LlamaLayer>& layers() const { return layers_; }
  const WeightMatrix& token_embedding() const { return token_embd_; }
  const WeightMatrix& output() const { return output_; }
  const float* output_norm() const { return output_norm_; }

 private:
  std::unique_ptr<GgufFile> file_;
  LlamaConfig config_;
  std::vector<LlamaLayer> layers_;
  WeightMatrix token_embd_, output_;
  const float* output_norm_ = nullptr;
};

// Decoding state of `batch` sequences: KV caches and scratch buffers. Sequences advance in
// lockstep (same position); each weight matrix is streamed once per step for all of them.
class LlamaSession {
 public:
  LlamaSession(const LlamaModel& model, int max_positions, Isa isa, int batch = 1,
               ThreadPool* pool = nullptr);
  // Runs `token` of sequence 0 at position pos (positions go 0, 1, 2, ...); its logits.
  StatusOr<const float*> Forward(int token, int pos);
  // Runs tokens[s] of every sequence s at position pos; logits of sequence s at s * vocab.
  StatusOr<const float*> ForwardBatch(const int* tokens, int pos);
  // Copies sequence 0's cache for positions [0, positions) to every other sequence: a prompt
  // prefilled once serves all samples.
  void ShareFirstSequence(int positions);
  int max_positions() const { return max_positions_; }
  int batch() const { return batch_; }

 private:
  StatusOr<const float*> Run(const int* tokens, int count, int pos);

  const LlamaModel& model_;
  int max_positions_;
  int batch_;
  MatVec matvec_;
  std::vector<float> x_, xb_, q_, k_, v_, att_, attn_out_, h1_, h3_, logits_, scores_;
  std::vector<float> key_cache_, value_cache_;  // [layer][sequence][pos][kv_dim]
};

}  // namespace evald::kernels
