#include "kernels/model/llama_model.h"
#include "kernels/quant/fp16.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <span>

#include "kernels/ops/activations.h"
#include "kernels/ops/thread_pool.h"
#include "kernels/quant/blocks.h"

namespace evald::kernels {

namespace {

Status LoadMatrix(const GgufFile& f, const std::string& name, int64_t cols, int64_t rows,
                  WeightMatrix* out) {
  const GgufTensor* t = f.FindTensor(name);
  if (!t) return Status::NotFound("tensor " + name + " is missing");
  if (t->dims.size() != 2 || static_cast<int64_t>(t->dims[0]) != cols ||
      static_cast<int64_t>(t->dims[1]) != rows)
    return Status::Corruption("tensor " + name + " has shape " + std::to_string(t->dims[0]) + "x" +
                              std::to_string(t->dims.size() > 1 ? t->dims[1] : 1) + ", expected " +
                              std::to_string(cols) + "x" + std::to_string(rows));
  switch (t->type) {
    case GgmlType::kF32:
    case GgmlType::kF16:
    case GgmlType::kBF16:
    case GgmlType::kQ8_0:
    case GgmlType::kQ4_0:
      break;
    default:
      return Status::InvalidArgument("tensor " + name + ": type " +
                                     std::string(Traits(static_cast<uint32_t>(t->type))->name) +
                                     " is not supported by the decoding core yet");
  }
  if ((t->type == GgmlType::kF32 && reinterpret_cast<uintptr_t>(t->data) % alignof(float) != 0) ||
      ((t->type == GgmlType::kF16 || t->type == GgmlType::kBF16) &&
       reinterpret_cast<uintptr_t>(t->data) % alignof(uint16_t) != 0))
    return Status::Corruption("tensor " + name + " is misaligned for its type");
  out->type = t->type;
  out->data = t->data;
  out->cols = cols;
  out->rows = rows;
  out->row_bytes = *RowBytes(t->type, static_cast<uint64_t>(cols));
  return Status::Ok();
}

Status LoadVector(const GgufFile& f, const std::string& name, int64_t n, const float** out) {
  const GgufTensor* t = f.FindTensor(name);
  if (!t) return Status::NotFound("tensor " + name + " is missing");
  if (t->type != GgmlType::kF32 || t->elements() != static_cast<uint64_t>(n))
    return Status::Corruption("tensor " + name + " must be F32 with " + std::to_string(n) +
                              " elements");
  if (reinterpret_cast<uintptr_t>(t->data) % alignof(float) != 0)
    return Status::Corruption("tensor " + name + " is misaligned");
  *out = reinterpret_cast<const float*>(t->data);
  return Status::Ok();
}

// Rotary embedding: the angles of one position, cos and sin per pair, computed once for the
// query and key heads of a layer. `freq_divisors` (gemma4's rope_freqs, one per pair, or null)
// divide each pair's angle: proportional RoPE leaves the pairs with huge divisors unrotated.
void RopeAngles(float pos, float base, int rope_dims, const float* freq_divisors, float* cos_sin) {
  for (int i = 0; i < rope_dims; i += 2) {
    float theta = pos * std::pow(base, -static_cast<float>(i) / rope_dims);
    if (freq_divisors) theta /= freq_divisors[i / 2];
    cos_sin[i] = std::cos(theta);
    cos_sin[i + 1] = std::sin(theta);
  }
}

// Rotates adjacent pairs (x[i], x[i+1]) (ggml's "normal" mode, llama) or the pairs
// (x[i], x[i + d/2]) (its "neox" mode, qwen2 and gemma).
void Rope(float* v, int n_heads, int head_dim, int rope_dims, const float* cos_sin,
          RopeStyle style) {
  for (int h = 0; h < n_heads; ++h) {
    float* x = v + h * head_dim;
    for (int i = 0; i < rope_dims; i += 2) {
      const float c = cos_sin[i], s = cos_sin[i + 1];
      const int a = style == RopeStyle::kAdjacentPairs ? i : i / 2;
      const int b = style == RopeStyle::kAdjacentPairs ? i + 1 : i / 2 + rope_dims / 2;
      const float x0 = x[a], x1 = x[b];
      x[a] = x0 * c - x1 * s;
      x[b] = x0 * s + x1 * c;
    }
  }
}

// GELU (tanh approximation) as ggml's CPU backend computes it: through a table indexed by the
// F16 value of x and holding F16 results. Rounding the same way keeps the core's logits within
// float noise of llama.cpp's (tests/llama_cpp_match_test.cc); the deviation from the exact
// function is one F16 rounding, far below what int8/int4 weights change.
float GeluExact(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + 0.044715f * x * x)));
}
float Gelu(float x) {
  if (x <= -10.0f) return 0.0f;
  if (x >= 10.0f) return x;
  return Fp16ToFp32(Fp32ToFp16(GeluExact(Fp16ToFp32(Fp32ToFp16(x)))));
}

}  // namespace

StatusOr<std::unique_ptr<LlamaModel>> LlamaModel::Load(const std::string& path) {
  auto file = GgufFile::Open(path);
  if (!file.ok()) return file.status();
  auto model = FromFile(std::move(*file));
  if (!model.ok()) return model.status().Annotate(path);
  return model;
}

// Views of every weight the configuration calls for, shapes checked.
Status LlamaModel::LoadWeights() {
  const GgufFile& f = *file_;
  const LlamaConfig& c = config_;
  const std::string* arch = &c.architecture;
  EVALD_RETURN_IF_ERROR(LoadMatrix(f, "token_embd.weight", c.dim, c.vocab, &token_embd_));
  if (f.FindTensor("output.weight")) {
    EVALD_RETURN_IF_ERROR(LoadMatrix(f, "output.weight", c.dim, c.vocab, &output_));
  } else {
    output_ = token_embd_;  // tied embeddings
  }
  EVALD_RETURN_IF_ERROR(LoadVector(f, "output_norm.weight", c.dim, &output_norm_));
  layers_.resize(static_cast<size_t>(c.n_layers));
  for (int l = 0; l < c.n_layers; ++l) {
    LlamaLayer& L = layers_[static_cast<size_t>(l)];
    const LayerShape& shape = c.layer[static_cast<size_t>(l)];
    const int kv_dim = shape.kv_dim(), q_dim = shape.q_dim(), hidden = shape.hidden;
    const std::string b = "blk." + std::to_string(l) + ".";
    EVALD_RETURN_IF_ERROR(LoadVector(f, b + "attn_norm.weight", c.dim, &L.attn_norm));
    EVALD_RETURN_IF_ERROR(LoadVector(f, b + "ffn_norm.weight", c.dim, &L.ffn_norm));
    EVALD_RETURN_IF_ERROR(LoadMatrix(f, b + "attn_q.weight", c.dim, q_dim, &L.wq));
    EVALD_RETURN_IF_ERROR(LoadMatrix(f, b + "attn_k.weight", c.dim, kv_dim, &L.wk));
    // Gemma 4 layers without a value projection take the keys' (before the key norm).
    L.values_from_keys = *arch == "gemma4" && !f.FindTensor(b + "attn_v.weight");
    if (!L.values_from_keys)
      EVALD_RETURN_IF_ERROR(LoadMatrix(f, b + "attn_v.weight", c.dim, kv_dim, &L.wv));
    EVALD_RETURN_IF_ERROR(LoadMatrix(f, b + "attn_output.weight", q_dim, c.dim, &L.wo));
    if (c.post_norms) {
      EVALD_RETURN_IF_ERROR(
          LoadVector(f, b + "post_attention_norm.weight", c.dim, &L.post_attn_norm));
      EVALD_RETURN_IF_ERROR(LoadVector(f, b + "post_ffw_norm.weight", c.dim, &L.post_ffw_norm));
    }
    if (c.qk_norm) {
      EVALD_RETURN_IF_ERROR(LoadVector(f, b + "attn_q_norm.weight", shape.head_dim, &L.q_norm));
      EVALD_RETURN_IF_ERROR(LoadVector(f, b + "attn_k_norm.weight", shape.head_dim, &L.k_norm));
    }
    if (*arch == "gemma4") {
      if (f.FindTensor(b + "layer_output_scale.weight"))
        EVALD_RETURN_IF_ERROR(LoadVector(f, b + "layer_output_scale.weight", 1, &L.out_scale));
      // Full layers: proportional RoPE, one shared table of frequency divisors.
      if (!shape.sliding)
        EVALD_RETURN_IF_ERROR(
            LoadVector(f, "rope_freqs.weight", shape.rope_dims / 2, &L.rope_freqs));
    }
    if (*arch == "qwen2") {
      EVALD_RETURN_IF_ERROR(LoadVector(f, b + "attn_q.bias", q_dim, &L.bq));
      EVALD_RETURN_IF_ERROR(LoadVector(f, b + "attn_k.bias", kv_dim, &L.bk));
      EVALD_RETURN_IF_ERROR(LoadVector(f, b + "attn_v.bias", kv_dim, &L.bv));
    }
    EVALD_RETURN_IF_ERROR(LoadMatrix(f, b + "ffn_gate.weight", c.dim, hidden, &L.w_gate));
    EVALD_RETURN_IF_ERROR(LoadMatrix(f, b + "ffn_up.weight", c.dim, hidden, &L.w_up));
    EVALD_RETURN_IF_ERROR(LoadMatrix(f, b + "ffn_down.weight", hidden, c.dim, &L.w_down));
  }
  return Status::Ok();
}

// Quantized matrices are laid out again for the packed AVX2 or AVX-512 VNNI kernels when this
// CPU has them (EVALD_NO_REPACK=1 keeps the file's layout; the embedding lookup always reads
// the file).
void LlamaModel::PackWeights() {
  const Isa isa = DetectIsa();
  if (PackedLayoutFor(isa) == Isa::kScalar || std::getenv("EVALD_NO_REPACK")) return;
  auto pack = [&](WeightMatrix* w) {
    auto p = PackedMatrix::Pack(*w, isa);
    if (!p) return;
    w->packed = p.get();
    packed_.push_back(std::move(p));
  };
  pack(&output_);
  for (auto& L : layers_)
    for (WeightMatrix* w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down})
      if (w->data) pack(w);  // (gemma4 layers may have no wv)
}

StatusOr<std::unique_ptr<LlamaModel>> LlamaModel::FromFile(std::unique_ptr<GgufFile> file) {
  std::unique_ptr<LlamaModel> m(new LlamaModel());
  m->file_ = std::move(file);
  auto config = ReadLlamaConfig(*m->file_);
  if (!config.ok()) return config.status();
  m->config_ = std::move(*config);
  EVALD_RETURN_IF_ERROR(m->LoadWeights());
  m->PackWeights();
  return m;
}

StatusOr<KvCacheType> ParseKvCacheType(std::string_view name) {
  if (name.empty() || name == "f32") return KvCacheType::kF32;
  if (name == "q8_0") return KvCacheType::kQ8_0;
  return Status::InvalidArgument("unknown KV cache type '" + std::string(name) + "' (f32 | q8_0)");
}

const char* KvCacheTypeName(KvCacheType type) {
  return type == KvCacheType::kQ8_0 ? "q8_0" : "f32";
}

Status CheckKvCacheType(const LlamaConfig& c, KvCacheType type) {
  for (const LayerShape& s : c.layer)
    if (type == KvCacheType::kQ8_0 && s.head_dim % kQK != 0)
      return Status::InvalidArgument("a q8_0 KV cache needs head sizes that are multiples of 32 (" +
                                     c.architecture + " has " + std::to_string(s.head_dim) + ")");
  return Status::Ok();
}

int64_t CachedPositions(const LlamaConfig& c, const LayerShape& layer, int64_t positions) {
  if (!layer.sliding || c.sliding_window <= 0) return positions;
  return std::min<int64_t>(positions, c.sliding_window + LlamaSession::kPrefillChunk - 1);
}

int64_t KvCacheBytes(const LlamaConfig& c, KvCacheType type, int64_t positions, int batch,
                     int64_t shared_prompt) {
  const int64_t shared = std::clamp<int64_t>(shared_prompt, 0, positions);
  int64_t keys = 0;  // keys (or values) of every layer and sequence
  for (const LayerShape& s : c.layer) {
    // Sequence 0 fills its rows (a ring: its slots); the others write only the positions after
    // the prompt, into as many rows (slots) as there are of them.
    const int64_t cached = CachedPositions(c, s, positions);
    keys += s.kv_dim() * (cached + (batch - 1) * std::min(cached, positions - shared));
  }
  const int64_t values = 2LL * keys;
  return type == KvCacheType::kQ8_0 ? values / kQK * static_cast<int64_t>(sizeof(BlockQ8_0))
                                    : values * static_cast<int64_t>(sizeof(float));
}

LlamaSession::LlamaSession(const LlamaModel& model, int max_positions, const KernelTable& kernels,
                           int batch, ThreadPool* pool, KvCacheType kv)
    : model_(model),
      max_positions_(max_positions),
      batch_(std::max(1, batch)),
      matvec_(kernels, pool),
      kv_type_(CheckKvCacheType(model.config(), kv).ok() ? kv : KvCacheType::kF32) {
  const LlamaConfig& c = model.config();
  const size_t b = static_cast<size_t>(std::max(batch_, kPrefillChunk));
  x_.resize(b * c.dim);
  xb_.resize(b * c.dim);
  q_.resize(b * c.max_q_dim);
  k_.resize(b * c.max_kv_dim);
  v_.resize(b * c.max_kv_dim);
  attn_out_.resize(b * c.max_q_dim);
  h1_.resize(b * c.max_hidden);
  h3_.resize(b * c.max_hidden);
  logits_.resize(static_cast<size_t>(batch_) * c.vocab);
  rope_angles_.resize(static_cast<size_t>(c.max_rope_dims));
  size_t cached = 0;
  for (const LayerShape& s : c.layer) {
    layer_cache_.push_back(cached);
    layer_slots_.push_back(static_cast<int>(CachedPositions(c, s, max_positions)));
    cached += static_cast<size_t>(batch_) * layer_slots_.back() * s.kv_dim();
  }
  if (kv_type_ == KvCacheType::kQ8_0) {
    key_blocks_ = ZeroPages<BlockQ8_0>(cached / kQK);
    value_blocks_ = ZeroPages<BlockQ8_0>(cached / kQK);
  } else {
    key_cache_ = ZeroPages<float>(cached);
    value_cache_ = ZeroPages<float>(cached);
  }
}

namespace {

// The most query heads sharing one KV head in any layer (Attention's scores hold one row each).
int64_t MaxQueryGroup(const LlamaConfig& c) {
  int64_t most = 1;
  for (const LayerShape& l : c.layer) most = std::max<int64_t>(most, l.n_heads / l.n_kv_heads);
  return most;
}

}  // namespace

// What the constructor above allocates besides the cache (keep the two together).
int64_t LlamaSession::ScratchBytes(const LlamaConfig& c, int batch, int positions, int threads) {
  const int64_t b = std::max(batch, kPrefillChunk);
  const int64_t floats =
      b * (2LL * c.dim + 2LL * c.max_q_dim + 2LL * c.max_kv_dim + 2LL * c.max_hidden) +
      static_cast<int64_t>(batch) * c.vocab + c.max_rope_dims +
      static_cast<int64_t>(threads) *
          std::max<int64_t>(positions * MaxQueryGroup(c),  // Attention's scores
                            std::min(b * positions * MaxQueryGroup(c), kMostSharedScores));
  return floats * static_cast<int64_t>(sizeof(float));
}

int64_t LlamaSession::kv_cache_bytes() const {
  return KvCacheBytes(model_.config(), kv_type_, max_positions_, batch_);
}

int64_t LlamaSession::kv_cache_resident_bytes() const {
  return static_cast<int64_t>(key_cache_.ResidentBytes() + value_cache_.ResidentBytes() +
                              key_blocks_.ResidentBytes() + value_blocks_.ResidentBytes());
}

StatusOr<const float*> LlamaSession::Forward(int token, int pos) {
  return Run(&token, Step{1, pos, false});
}

StatusOr<const float*> LlamaSession::ForwardBatch(const int* tokens, int pos) {
  return Run(tokens, Step{batch_, pos, false});
}

StatusOr<const float*> LlamaSession::ForwardSequences(const int* tokens, const int* sequences,
                                                      int count, int pos) {
  if (count < 1 || count > batch_)
    return Status::InvalidArgument("between 1 and " + std::to_string(batch_) + " sequences");
  // Strictly increasing: no two vectors write the same sequence's row.
  for (int i = 0; i < count; ++i)
    if (sequences[i] < (i == 0 ? 0 : sequences[i - 1] + 1) || sequences[i] >= batch_)
      return Status::InvalidArgument("sequences must be strictly increasing, below " +
                                     std::to_string(batch_));
  return Run(tokens, Step{count, pos, false, sequences});
}

StatusOr<const float*> LlamaSession::Prefill(const int* tokens, int count, int pos) {
  if (count < 1 || count > kPrefillChunk)
    return Status::InvalidArgument("prefill takes 1.." + std::to_string(kPrefillChunk) + " tokens");
  if (pos + count > max_positions_)
    return Status::InvalidArgument("position beyond the session's context");
  return Run(tokens, Step{count, pos, true});
}

size_t LlamaSession::CacheAt(int layer, int seq, int pos) const {
  const size_t l = static_cast<size_t>(layer);
  const size_t kv_dim = static_cast<size_t>(model_.config().layer[l].kv_dim());
  const size_t slots = static_cast<size_t>(layer_slots_[l]);
  return layer_cache_[l] +
         (static_cast<size_t>(seq) * slots + static_cast<size_t>(pos) % slots) * kv_dim;
}

void LlamaSession::ShareFirstSequence(int positions) {
  Unshare();
  shared_prefix_ = batch_ > 1 ? std::min(positions, max_positions_) : 0;
}

Status LlamaSession::CopySequence(int from, int to, int begin, int end) {
  if (from < 0 || from >= batch_ || to < 0 || to >= batch_ || from == to)
    return Status::InvalidArgument("copy between two sequences below " + std::to_string(batch_));
  if (begin < 0 || begin > end || end > max_positions_)
    return Status::InvalidArgument("positions beyond the session's context");
  const LlamaConfig& c = model_.config();
  auto copy = [&](auto& cache, size_t unit) {
    for (int l = 0; l < c.n_layers; ++l) {
      const size_t row = c.layer[static_cast<size_t>(l)].kv_dim() / unit;
      // A ring holds the last `slots` positions only.
      for (int t = std::max(begin, end - layer_slots_[static_cast<size_t>(l)]); t < end; ++t)
        std::copy_n(cache.begin() + CacheAt(l, from, t) / unit, row,
                    cache.begin() + CacheAt(l, to, t) / unit);
    }
  };
  if (kv_type_ == KvCacheType::kQ8_0) {
    copy(key_blocks_, kQK);
    copy(value_blocks_, kQK);
  } else {
    copy(key_cache_, 1);
    copy(value_cache_, 1);
  }
  return Status::Ok();
}

void LlamaSession::Unshare() {
  if (shared_prefix_ == 0) return;
  for (int seq = 1; seq < batch_; ++seq) (void)CopySequence(0, seq, 0, shared_prefix_);
  shared_prefix_ = 0;
}

Status LlamaSession::Embed(const int* tokens, int count) {
  const LlamaConfig& c = model_.config();
  const WeightMatrix& emb = model_.token_embedding();
  for (int s = 0; s < count; ++s) {
    if (tokens[s] < 0 || tokens[s] >= c.vocab)
      return Status::InvalidArgument("token id out of range");
    EVALD_RETURN_IF_ERROR(DequantizeRow(emb.type,
                                        emb.data + static_cast<uint64_t>(tokens[s]) * emb.row_bytes,
                                        x_.data() + s * c.dim, c.dim));
    if (c.embedding_scale != 1.0f)
      for (int i = 0; i < c.dim; ++i) x_[s * c.dim + i] *= c.embedding_scale;
  }
  return Status::Ok();
}

// Queries, keys and values of every vector of the step: biases, QK norms, RoPE; the keys and
// values go into the cache at their positions.
void LlamaSession::ProjectQkv(const Step& step, int l) {
  const LlamaConfig& c = model_.config();
  const LlamaLayer& L = model_.layers()[static_cast<size_t>(l)];
  const LayerShape& shape = c.layer[static_cast<size_t>(l)];
  const int kv_dim = shape.kv_dim(), q_dim = shape.q_dim(), hd = shape.head_dim;
  for (int s = 0; s < step.count; ++s)
    matvec_.kernels().rms_norm(&x_[s * c.dim], L.attn_norm, &xb_[s * c.dim], c.dim, c.rms_eps);
  // One quantized input and one pass of the pool for the two or three projections.
  const WeightMatrix* projections[] = {&L.wq, &L.wk, &L.wv};
  float* outputs[] = {q_.data(), k_.data(), v_.data()};
  const size_t used = L.values_from_keys ? 2 : 3;
  matvec_.ApplyBatchToEach(std::span(projections, used), xb_.data(), step.count,
                           std::span(outputs, used));
  if (L.values_from_keys)
    std::copy_n(k_.data(), static_cast<size_t>(step.count) * kv_dim, v_.data());
  for (int s = 0; s < step.count; ++s) {
    const int p = step.PosOf(s);
    float* q = &q_[s * q_dim];
    float* k = &k_[s * kv_dim];
    float* v = &v_[s * kv_dim];
    if (L.bq) {
      for (int i = 0; i < q_dim; ++i) q[i] += L.bq[i];
      for (int i = 0; i < kv_dim; ++i) k[i] += L.bk[i];
      for (int i = 0; i < kv_dim; ++i) v[i] += L.bv[i];
    }
    if (c.qk_norm) {
      for (int h = 0; h < shape.n_heads; ++h)
        matvec_.kernels().rms_norm(q + h * hd, L.q_norm, q + h * hd, hd, c.rms_eps);
      for (int h = 0; h < shape.n_kv_heads; ++h)
        matvec_.kernels().rms_norm(k + h * hd, L.k_norm, k + h * hd, hd, c.rms_eps);
    }
    if (c.value_norm)
      for (int h = 0; h < shape.n_kv_heads; ++h)
        matvec_.kernels().rms_norm(v + h * hd, nullptr, v + h * hd, hd, c.rms_eps);
    // A decode step's sequences share one position: its angles once per layer.
    if (s == 0 || p != step.PosOf(s - 1))
      RopeAngles(static_cast<float>(p) * shape.rope_scale, shape.rope_base, shape.rope_dims,
                 L.rope_freqs, rope_angles_.data());
    Rope(q, shape.n_heads, hd, shape.rope_dims, rope_angles_.data(), c.rope_style);
    Rope(k, shape.n_kv_heads, hd, shape.rope_dims, rope_angles_.data(), c.rope_style);
    const size_t at = CacheAt(l, step.SeqOf(s), p);
    if (kv_type_ == KvCacheType::kQ8_0) {
      QuantizeRowQ8_0(k, key_blocks_.data() + at / kQK, kv_dim);
      QuantizeRowQ8_0(v, value_blocks_.data() + at / kQK, kv_dim);
    } else {
      std::copy_n(k, kv_dim, key_cache_.data() + at);
      std::copy_n(v, kv_dim, value_cache_.data() + at);
    }
  }
}

// x += norm(xb) (the post-norm only where the architecture has one).
void LlamaSession::AddResidual(int count, const float* post_norm) {
  const LlamaConfig& c = model_.config();
  if (post_norm)
    for (int s = 0; s < count; ++s)
      matvec_.kernels().rms_norm(&xb_[s * c.dim], post_norm, &xb_[s * c.dim], c.dim, c.rms_eps);
  for (int i = 0; i < count * c.dim; ++i) x_[i] += xb_[i];
}

void LlamaSession::FeedForward(int count, int l) {
  const LlamaConfig& c = model_.config();
  const LlamaLayer& L = model_.layers()[static_cast<size_t>(l)];
  for (int s = 0; s < count; ++s)
    matvec_.kernels().rms_norm(&x_[s * c.dim], L.ffn_norm, &xb_[s * c.dim], c.dim, c.rms_eps);
  const int hidden = c.layer[static_cast<size_t>(l)].hidden;
  const WeightMatrix* gate_up[] = {&L.w_gate, &L.w_up};
  float* outputs[] = {h1_.data(), h3_.data()};
  matvec_.ApplyBatchToEach(gate_up, xb_.data(), count, outputs);
  if (c.activation == FfnActivation::kGelu) {
    for (int i = 0; i < count * hidden; ++i) h1_[i] = Gelu(h1_[i]) * h3_[i];
  } else {
    matvec_.kernels().gated_silu(h1_.data(), h3_.data(), static_cast<int64_t>(count) * hidden);
  }
  matvec_.ApplyBatch(L.w_down, h1_.data(), count, xb_.data());
  AddResidual(count, L.post_ffw_norm);
  if (L.out_scale)
    for (int i = 0; i < count * c.dim; ++i) x_[i] *= L.out_scale[0];
}

StatusOr<const float*> LlamaSession::PrefillAllLogits(const int* tokens, int count, int pos) {
  if (count < 1 || count > kPrefillChunk)
    return Status::InvalidArgument("prefill takes 1.." + std::to_string(kPrefillChunk) + " tokens");
  if (pos + count > max_positions_)
    return Status::InvalidArgument("position beyond the session's context");
  return Run(tokens, Step{count, pos, true}, /*all_logits=*/true);
}

StatusOr<const float*> LlamaSession::Run(const int* tokens, const Step& step, bool all_logits) {
  const LlamaConfig& c = model_.config();
  const int count = step.count;
  if (step.pos < 0 || step.pos >= max_positions_)
    return Status::InvalidArgument("position beyond the session's context");
  EVALD_RETURN_IF_ERROR(Embed(tokens, count));
  if (step.pos < shared_prefix_) Unshare();  // a write inside the shared prompt
  for (int l = 0; l < c.n_layers; ++l) {
    ProjectQkv(step, l);
    Attention(step, l);
    FeedForward(count, l);
  }
  // Prefill needs only the last token's logits (unless a text is being scored).
  const int first_out = step.prefill && !all_logits ? count - 1 : 0, outputs = count - first_out;
  const size_t needed = static_cast<size_t>(outputs) * c.vocab;
  if (logits_.size() < needed) logits_.resize(needed);
  for (int s = first_out; s < count; ++s)
    matvec_.kernels().rms_norm(&x_[s * c.dim], model_.output_norm(), &xb_[(s - first_out) * c.dim],
                               c.dim, c.rms_eps);
  matvec_.ApplyBatch(model_.output(), xb_.data(), outputs, logits_.data());
  if (c.final_softcap > 0)
    for (int i = 0; i < outputs * c.vocab; ++i)
      logits_[i] = std::tanh(logits_[i] / c.final_softcap) * c.final_softcap;
  return logits_.data();
}

}  // namespace evald::kernels
