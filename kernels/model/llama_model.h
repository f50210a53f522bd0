// Decoder-only transformers over a GGUF checkpoint: `llama` (Llama 2/3, Mistral, CodeLlama,
// DeepSeek-Coder layouts), `qwen2` (QKV biases, half-split RoPE), `gemma` (scaled embeddings,
// GELU, head size from key_length), `gemma2` (+ attention and final-logit soft-capping,
// sliding-window attention on every other layer, norms after attention and FFN) and `gemma3`
// (+ per-head RMSNorm of q and k, five sliding layers to one global, a local RoPE base) and
// `gemma4`'s dense text models (head sizes and KV head counts per layer kind, values from the
// keys' projection where a layer has none, weightless RMSNorm of the values, no q.k scaling,
// proportional RoPE through rope_freqs on the full layers, a per-layer output scale).
// The configuration (llama_config) and weights are validated at load; the decoder keeps a KV cache
// and computes next-token logits one position at a time. The model code calls kernels only through
// MatVec and the small ops below, so other kernel paths can replace them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/aligned_vector.h"
#include "base/status.h"
#include "base/zero_pages.h"
#include "kernels/gguf/gguf_file.h"
#include "kernels/model/llama_config.h"
#include "kernels/ops/matvec.h"
#include "kernels/ops/packed_matrix.h"
#include "kernels/ops/thread_pool.h"

namespace evald::kernels {

struct LlamaLayer {
  const float* attn_norm = nullptr;
  const float* ffn_norm = nullptr;
  const float* bq = nullptr;  // qwen2's attention biases (nullptr when absent)
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* post_attn_norm = nullptr;  // gemma2/3
  const float* post_ffw_norm = nullptr;
  const float* q_norm = nullptr;  // gemma3/4, head_dim long
  const float* k_norm = nullptr;
  const float* rope_freqs = nullptr;  // gemma4 full layers: each pair's frequency divided by this
  const float* out_scale = nullptr;   // gemma4: the layer's output multiplied by out_scale[0]
  bool values_from_keys = false;      // gemma4: no attn_v; values are the keys' projection
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
  // How many weight matrices were laid out for the AVX-512 VNNI kernels at load.
  int packed_matrices() const { return static_cast<int>(packed_.size()); }

 private:
  Status LoadWeights();
  void PackWeights();

  std::unique_ptr<GgufFile> file_;
  LlamaConfig config_;
  std::vector<LlamaLayer> layers_;
  WeightMatrix token_embd_, output_;
  const float* output_norm_ = nullptr;
  std::vector<std::unique_ptr<PackedMatrix>> packed_;
};

// How the KV cache holds keys and values: F32 (exact), or Q8_0 blocks of 32 with a half scale
// (llama.cpp's `q8_0` cache type: 34 bytes per 32 values instead of 128, keys and values alike).
enum class KvCacheType { kF32, kQ8_0 };

// "f32" | "q8_0" (also "" for f32).
StatusOr<KvCacheType> ParseKvCacheType(std::string_view name);
const char* KvCacheTypeName(KvCacheType type);
// Whether `model` can keep its cache as `type` (Q8_0 needs head sizes that are multiples of 32).
Status CheckKvCacheType(const LlamaConfig& config, KvCacheType type);
// Positions a layer's cache holds for sequences of `positions`: all of them, or on a sliding
// layer its window and one prefill chunk more (a ring: a chunk's keys are written before its
// first token attends, so the ring must not overwrite what that token still sees).
int64_t CachedPositions(const LlamaConfig& config, const LayerShape& layer, int64_t positions);
// Bytes of the KV cache of `batch` sequences of `positions` each, where their first
// `shared_prompt` positions are one prompt held once (LlamaSession::ShareFirstSequence: the
// other sequences write only the positions after it, in a sliding layer's ring only as many
// slots as those fill). The session reserves the whole cache as unshared but commits only the
// rows written (ZeroPages), so this with the prompt shared is what it holds once every
// sequence reaches `positions`.
int64_t KvCacheBytes(const LlamaConfig& config, KvCacheType type, int64_t positions, int batch,
                     int64_t shared_prompt = 0);

// Decoding state of `batch` sequences: KV caches and scratch buffers. Sequences advance in
// lockstep (same position); each weight matrix is streamed once per step for all of them.
class LlamaSession {
 public:
  // `kv`: Q8_0 only where CheckKvCacheType allows it (else the cache stays F32).
  // `kernels`: the table of an ISA this CPU runs (KernelTable::For), picked once here.
  LlamaSession(const LlamaModel& model, int max_positions, const KernelTable& kernels,
               int batch = 1, ThreadPool* pool = nullptr, KvCacheType kv = KvCacheType::kF32);
  // Runs `token` of sequence 0 at position pos (positions go 0, 1, 2, ...); its logits.
  StatusOr<const float*> Forward(int token, int pos);
  // Runs tokens[s] of every sequence s at position pos; logits of sequence s at s * vocab.
  StatusOr<const float*> ForwardBatch(const int* tokens, int pos);
  // Runs tokens[i] of sequence sequences[i] at position pos for i < count, and nothing of the
  // sequences left out (samples that have finished: their caches stay as they were and are not
  // read again); logits of vector i at i * vocab. sequences: strictly increasing, below
  // batch(). Each sequence's logits are the ones ForwardBatch gives it, bit for bit.
  StatusOr<const float*> ForwardSequences(const int* tokens, const int* sequences, int count,
                                          int pos);
  // Runs `count` consecutive tokens of sequence 0 from position pos as one batch (every weight
  // matrix streamed once for all of them, causal attention among them); the logits of the last.
  // Bit-identical to Forward on each token in turn.
  StatusOr<const float*> Prefill(const int* tokens, int count, int pos);
  // The same, with the logits of every one of the `count` tokens (row s at s * vocab): scoring
  // a given text (teacher forcing) at the cost of a prefill.
  StatusOr<const float*> PrefillAllLogits(const int* tokens, int count, int pos);
  // The most tokens Prefill takes at once.
  static constexpr int kPrefillChunk = 16;
  // Gives every other sequence sequence 0's cache for positions [0, positions): a prompt
  // prefilled once serves all samples. Every layer reads those rows from sequence 0 (one copy in
  // memory, read once for all samples while it is in cache). A sliding layer's ring too: the
  // sequences advance in lockstep, so sequence 0 overwrites a prompt row only once the row has
  // left every sequence's window. A later write inside the shared positions copies them first.
  void ShareFirstSequence(int positions);
  // Gives sequence `to` sequence `from`'s rows of positions [begin, end) in every layer (a
  // sliding layer's as far as its ring holds them): a sample computed as another until the two
  // drew different tokens (SampleGroups) takes over the rows written for both.
  Status CopySequence(int from, int to, int begin, int end);
  int max_positions() const { return max_positions_; }
  KvCacheType kv_cache_type() const { return kv_type_; }
  int64_t kv_cache_bytes() const;  // reserved: every position of every sequence
  // Of those, the bytes committed so far: the pages of rows written (ZeroPages).
  int64_t kv_cache_resident_bytes() const;
  // Bytes of the other buffers a session of `batch` sequences of `positions` allocates
  // (activations, logits; attention scores per thread), for memory planning.
  static int64_t ScratchBytes(const LlamaConfig& config, int batch, int positions, int threads);
  int batch() const { return batch_; }

 private:
  // The vectors of one Run: vector s at position PosOf(s) of sequence SeqOf(s). Decoding, vector
  // s is sequence s, or sequences[s] where only some run; a prefill runs tokens of sequence 0
  // at positions pos, pos + 1, ...
  struct Step {
    int count, pos;
    bool prefill;
    const int* sequences = nullptr;
    int PosOf(int s) const { return prefill ? pos + s : pos; }
    int SeqOf(int s) const { return prefill ? 0 : sequences ? sequences[s] : s; }
  };
  // The step's vectors through the model; the logits of every vector, or of a prefill's last
  // only unless `all_logits`.
  StatusOr<const float*> Run(const int* tokens, const Step& step, bool all_logits = false);
  Status Embed(const int* tokens, int count);
  // Copies the shared prompt's rows into every other sequence and ends the sharing (before a
  // step writes inside them).
  void Unshare();
  // Whether layer l keeps every position (no ring).
  bool FullLayer(int l) const { return layer_slots_[static_cast<size_t>(l)] >= max_positions_; }
  void ProjectQkv(const Step& step, int layer);
  void Attention(const Step& step, int layer);
  // The first position vector s of the step attends to in layer l (a sliding layer's window).
  int FirstPosition(const Step& step, int l, int s) const;
  // Positions [0, k) whose keys every vector of the step reads from the same rows, each from its
  // first position (a decode step's sequences over the prompt they share, a prefill chunk's
  // tokens over the positions before it): their scores are computed once for all of the step's
  // query heads of a KV head (SharedScoresFn, SharedScoresQ8_0Fn over a Q8_0 cache). 0 where
  // nothing is shared, the kernels have no shared scores for the cache's type, the pool has
  // more threads than there are KV heads to split by, or the scores would outgrow
  // kMostSharedScores.
  int SharedPositions(const Step& step, int l) const;
  // The query heads of vector s over KV head kv: `scores`, group x (position + 1) floats, holds
  // the scores of the first `scored` positions of each head already.
  void AttendHeads(const Step& step, int l, int kv, int s, int scored, float* scores);
  // Every KV head on its own (split across the pool), the scores of positions [0, shared) once
  // for all vectors of the step, then each vector's heads.
  void AttendSharing(const Step& step, int l, int shared);
  // One KV head of AttendSharing: the scores of [0, shared) for all the step's query heads over
  // it in one call, then each vector's heads from there.
  void AttendKvHeadSharing(const Step& step, int l, int kv, int shared);
  // The most floats of scores one thread holds for AttendSharing.
  static constexpr int64_t kMostSharedScores = int64_t{8} << 20;
  void FeedForward(int count, int layer);
  void AddResidual(int count, const float* post_norm);

  const LlamaModel& model_;
  int max_positions_;
  int batch_;
  MatVec matvec_;  // its pool (optional) also splits attention
  std::vector<float> x_, xb_, k_, v_, h1_, h3_, logits_;
  AlignedVector<float> q_, attn_out_;  // read and written by the attention kernels, 16 at a time
  std::vector<float> rope_angles_;     // cos, sin per rotated pair at the current position
  KvCacheType kv_type_;
  // On zero pages, committed as rows are written: the rows a sample never reaches and the
  // shared prompt's rows of sequences 1..n-1 (read from sequence 0) take no memory.
  ZeroPages<float> key_cache_, value_cache_;        // F32: [layer][sequence][pos][kv_dim]
  ZeroPages<BlockQ8_0> key_blocks_, value_blocks_;  // Q8_0: [layer][sequence][pos][kv_dim/32]
  // Where each layer's cache starts, in values (its kv_dim may differ from the others'), and
  // how many positions it holds (CachedPositions: sliding layers keep a ring of their window).
  std::vector<size_t> layer_cache_;
  std::vector<int> layer_slots_;
  // Positions [0, shared_prefix_) of every sequence but 0 are sequence 0's, in every layer.
  int shared_prefix_ = 0;
  size_t CacheAt(int layer, int seq, int pos) const;
};

}  // namespace evald::kernels
