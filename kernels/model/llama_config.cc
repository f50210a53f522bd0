#include "kernels/model/llama_config.h"

#include <algorithm>
#include <cmath>

namespace evald::kernels {

namespace {

StatusOr<int> PositiveInt(const GgufFile& f, const std::string& key, int64_t max = 1 << 24) {
  auto v = f.GetInt(key);
  if (!v) return Status::NotFound("metadata " + key + " is missing");
  if (*v <= 0 || *v > max)
    return Status::Corruption("metadata " + key + " = " + std::to_string(*v) + " is out of range");
  return static_cast<int>(*v);
}

// A positive integer from the metadata into *out.
Status GetPositive(const GgufFile& f, const std::string& key, int* out, int64_t max = 1 << 24) {
  auto v = PositiveInt(f, key, max);
  if (!v.ok()) return v.status();
  *out = *v;
  return Status::Ok();
}

// A finite non-negative float from the metadata into *out, when present.
Status GetFiniteNonNegative(const GgufFile& f, const std::string& key, float* out) {
  if (auto v = f.GetFloat(key)) {
    if (!(*v >= 0 && *v < 1e6)) return Status::Corruption("metadata " + key + " out of range");
    *out = static_cast<float>(*v);
  }
  return Status::Ok();
}

// A per-layer integer: one value for every layer, or an array of one per layer (gemma4's head
// counts and FFN sizes). Absent: `fallback` (0 = required). Values must be positive.
struct PerLayer {
  std::vector<int> values;
  int first = 0;
  bool uniform = true;
};

Status ReadPerLayer(const GgufFile& f, const std::string& key, int n, int64_t max, int fallback,
                    PerLayer* out) {
  out->values.assign(static_cast<size_t>(n), fallback);
  const GgufValue* v = f.Find(key);
  if (!v && fallback == 0) return Status::NotFound("metadata " + key + " is missing");
  if (v && v->type == GgufType::kArray) {
    if (v->array.size() != static_cast<size_t>(n))
      return Status::Corruption("metadata " + key + " has " + std::to_string(v->array.size()) +
                                " values for " + std::to_string(n) + " layers");
    for (int l = 0; l < n; ++l) {
      auto x = v->array[static_cast<size_t>(l)].AsInt();
      if (!x || *x <= 0 || *x > max)
        return Status::Corruption("metadata " + key + " is out of range at layer " +
                                  std::to_string(l));
      out->values[static_cast<size_t>(l)] = static_cast<int>(*x);
    }
  } else if (v) {
    auto x = v->AsInt();
    if (!x || *x <= 0 || *x > max)
      return Status::Corruption("metadata " + key + " is out of range");
    out->values.assign(static_cast<size_t>(n), static_cast<int>(*x));
  }
  out->first = out->values.empty() ? fallback : out->values[0];
  for (int x : out->values) out->uniform = out->uniform && x == out->first;
  return Status::Ok();
}

// gemma4's sliding layers: attention.sliding_window_pattern as one flag per layer, or a period n
// (layer l slides unless l % n == n - 1; 0: every layer), as llama.cpp reads it.
StatusOr<std::vector<bool>> Gemma4SlidingLayers(const GgufFile& f, const std::string& p, int n) {
  const std::string key = p + "attention.sliding_window_pattern";
  const GgufValue* v = f.Find(key);
  if (!v) return Status::NotFound("metadata " + key + " is missing");
  std::vector<bool> out(static_cast<size_t>(n));
  if (v->type == GgufType::kArray) {
    if (v->array.size() != static_cast<size_t>(n))
      return Status::Corruption("metadata " + key + " does not have one value per layer");
    for (int l = 0; l < n; ++l) {
      auto x = v->array[static_cast<size_t>(l)].AsInt();
      if (!x) return Status::Corruption("metadata " + key + " holds a non-integer");
      out[static_cast<size_t>(l)] = *x != 0;
    }
    return out;
  }
  auto period = v->AsInt();
  if (!period || *period < 0 || *period > 1024)
    return Status::Corruption("metadata " + key + " is out of range");
  for (int l = 0; l < n; ++l)
    out[static_cast<size_t>(l)] = *period == 0 || l % *period < *period - 1;
  return out;
}

// Gemma 4's head sizes (full layers: key_length; sliding ones: key_length_swa), RoPE dimensions
// and bases per layer kind; no scaling of q.k (q and k are RMS-normed); values RMS-normed.
Status ReadGemma4Settings(const GgufFile& f, LlamaConfig* c, std::vector<bool>* sliding,
                          int* head_dim_swa, int* rope_dims_swa, float* rope_base_swa) {
  const std::string p = "gemma4.";
  auto got = Gemma4SlidingLayers(f, p, c->n_layers);
  if (!got.ok()) return got.status();
  *sliding = std::move(*got);
  EVALD_RETURN_IF_ERROR(GetPositive(f, p + "attention.sliding_window", &c->sliding_window));
  EVALD_RETURN_IF_ERROR(GetPositive(f, p + "attention.key_length_swa", head_dim_swa, 1 << 16));
  if (auto v = f.GetInt(p + "attention.value_length_swa"); !v || *v != *head_dim_swa)
    return Status::InvalidArgument(
        "gemma4: attention.value_length_swa must be present and equal key_length_swa");
  if (auto v = f.GetInt(p + "attention.value_length"); !v || *v != c->head_dim)
    return Status::InvalidArgument(
        "gemma4: attention.value_length must be present and equal key_length");
  *rope_dims_swa = *head_dim_swa;
  if (f.Find(p + "rope.dimension_count_swa"))
    EVALD_RETURN_IF_ERROR(GetPositive(f, p + "rope.dimension_count_swa", rope_dims_swa, 1 << 16));
  *rope_base_swa = c->rope_base;
  if (auto base = f.GetFloat(p + "rope.freq_base_swa")) *rope_base_swa = static_cast<float>(*base);
  c->post_norms = true;
  c->qk_norm = true;
  c->value_norm = true;
  c->query_scale = 1.0f;
  // A file without the key gets llama.cpp's default for the architecture, as llama.cpp reads it.
  c->final_softcap = 30.0f;
  return GetFiniteNonNegative(f, p + "final_logit_softcapping", &c->final_softcap);
}

// What of Gemma 4 the core does not run, refused by name instead of computed wrongly.
Status RefuseUnsupportedGemma4(const GgufFile& f) {
  const std::string p = "gemma4.";
  if (auto v = f.GetInt(p + "attention.shared_kv_layers"); v && *v != 0)
    return Status::InvalidArgument(
        "gemma4: KV sharing between layers (attention.shared_kv_layers, the E2B/E4B models) is "
        "not supported");
  if (auto v = f.GetInt(p + "embedding_length_per_layer_input"); v && *v != 0)
    return Status::InvalidArgument(
        "gemma4: per-layer embeddings (the E2B/E4B models) are not supported");
  if (auto v = f.GetInt(p + "expert_count");
      (v && *v != 0) || f.FindTensor("blk.0.ffn_gate_inp.weight"))
    return Status::InvalidArgument(
        "gemma4: mixture-of-experts layers (the 26B-A4B model) are not supported");
  for (const GgufTensor& t : f.tensors())
    if (t.name.rfind("v.", 0) == 0 || t.name.rfind("a.", 0) == 0 || t.name.rfind("mm.", 0) == 0)
      return Status::InvalidArgument("gemma4: vision, audio and multimodal projector tensors (" +
                                     t.name.substr(0, 64) +
                                     ") are not supported; use the text model");
  return Status::Ok();
}

// Gemma 2 and 3: norms after attention and FFN, sliding windows, soft-capping, QK norms, RoPE
// scaling.
Status ReadGemmaSettings(const GgufFile& f, const std::string& arch, LlamaConfig* config) {
  LlamaConfig& c = *config;
  const std::string p = arch + ".";
  if (arch == "gemma2" || arch == "gemma3") {
    c.post_norms = true;
    // Gemma 2 slides on even layers with a 4096 window unless the file says otherwise and caps
    // attention at 50 and logits at 30; Gemma 3 slides on five layers of six, caps nothing.
    c.sliding_window = arch == "gemma2" ? 4096 : 0;
    if (f.Find(p + "attention.sliding_window"))
      EVALD_RETURN_IF_ERROR(
          GetPositive(f, p + "attention.sliding_window", &c.sliding_window, 1 << 24));
    if (c.sliding_window == 0)
      return Status::Corruption("metadata " + p + "attention.sliding_window is missing");
  }
  if (arch == "gemma2") {
    c.attn_softcap = 50.0f;
    c.final_softcap = 30.0f;
    EVALD_RETURN_IF_ERROR(GetFiniteNonNegative(f, p + "attn_logit_softcapping", &c.attn_softcap));
    EVALD_RETURN_IF_ERROR(GetFiniteNonNegative(f, p + "final_logit_softcapping", &c.final_softcap));
  }
  if (arch == "gemma3") {
    c.qk_norm = true;
    c.rope_base_local = 10000.0f;
    if (auto type = f.GetString(p + "rope.scaling.type"); type && *type == "linear") {
      float factor = 1;
      EVALD_RETURN_IF_ERROR(GetFiniteNonNegative(f, p + "rope.scaling.factor", &factor));
      if (factor > 0) c.rope_scale_global = 1.0f / factor;
    }
  }
  return Status::Ok();
}

// Each layer's shape, and the largest of each dimension.
Status BuildLayerShapes(const GgufFile& f, const PerLayer& heads, const PerLayer& kv_heads,
                        const PerLayer& hidden, LlamaConfig* config) {
  LlamaConfig& c = *config;
  std::vector<bool> sliding(static_cast<size_t>(c.n_layers), false);
  int head_dim_swa = c.head_dim, rope_dims_swa = c.rope_dims;
  float rope_base_swa = c.rope_base_local > 0 ? c.rope_base_local : c.rope_base;
  if (c.architecture == "gemma4")
    EVALD_RETURN_IF_ERROR(
        ReadGemma4Settings(f, &c, &sliding, &head_dim_swa, &rope_dims_swa, &rope_base_swa));
  c.layer.assign(static_cast<size_t>(c.n_layers), LayerShape{});
  for (int l = 0; l < c.n_layers; ++l) {
    LayerShape& s = c.layer[static_cast<size_t>(l)];
    s.sliding = c.architecture == "gemma2"   ? l % 2 == 0
                : c.architecture == "gemma3" ? l % 6 < 5
                                             : sliding[static_cast<size_t>(l)];
    s.n_heads = heads.values[static_cast<size_t>(l)];
    s.n_kv_heads = kv_heads.values[static_cast<size_t>(l)];
    s.hidden = hidden.values[static_cast<size_t>(l)];
    s.head_dim = s.sliding ? head_dim_swa : c.head_dim;
    s.rope_dims = s.sliding ? rope_dims_swa : c.rope_dims;
    s.rope_base = s.sliding ? rope_base_swa : c.rope_base;
    s.rope_scale = s.sliding ? 1.0f : c.rope_scale_global;
    if (s.head_dim % 2 != 0 || s.rope_dims > s.head_dim || s.rope_dims % 2 != 0)
      return Status::Corruption("layer " + std::to_string(l) +
                                ": bad head size or RoPE dimensions");
    c.max_q_dim = std::max(c.max_q_dim, s.q_dim());
    c.max_kv_dim = std::max(c.max_kv_dim, s.kv_dim());
    c.max_hidden = std::max(c.max_hidden, s.hidden);
    c.max_rope_dims = std::max(c.max_rope_dims, s.rope_dims);
  }
  return Status::Ok();
}

// The configuration from the file's metadata: every size validated against its tensors' use.
Status ReadConfig(const GgufFile& f, LlamaConfig* config) {
  LlamaConfig& c = *config;
  auto arch = f.GetString("general.architecture");
  if (!arch) return Status::Corruption("general.architecture is missing");
  if (*arch != "llama" && *arch != "qwen2" && *arch != "gemma" && *arch != "gemma2" &&
      *arch != "gemma3" && *arch != "gemma4")
    return Status::InvalidArgument(
        "architecture '" + *arch +
        "' is not supported yet (llama, qwen2, gemma, gemma2, gemma3 and gemma4 are)");
  c.architecture = *arch;
  const bool gemma = arch->rfind("gemma", 0) == 0;
  if (*arch != "llama") c.rope_style = RopeStyle::kHalfSplit;
  if (gemma) c.activation = FfnActivation::kGelu;
  const std::string p = *arch + ".";
  auto get = [&](const std::string& key, int* out, int64_t max = 1 << 24) {
    return GetPositive(f, p + key, out, max);
  };
  EVALD_RETURN_IF_ERROR(get("embedding_length", &c.dim, 1 << 16));
  EVALD_RETURN_IF_ERROR(get("block_count", &c.n_layers, 1024));
  // One value for every layer, or (gemma4) an array of one per layer.
  PerLayer heads, kv_heads, hidden;
  EVALD_RETURN_IF_ERROR(
      ReadPerLayer(f, p + "feed_forward_length", c.n_layers, 1 << 18, 0, &hidden));
  EVALD_RETURN_IF_ERROR(ReadPerLayer(f, p + "attention.head_count", c.n_layers, 1024, 0, &heads));
  EVALD_RETURN_IF_ERROR(
      ReadPerLayer(f, p + "attention.head_count_kv", c.n_layers, 1024, heads.first, &kv_heads));
  if (*arch != "gemma4" && !(heads.uniform && kv_heads.uniform && hidden.uniform))
    return Status::InvalidArgument(
        "per-layer head counts or FFN sizes are supported for gemma4 only");
  c.n_heads = heads.first;
  EVALD_RETURN_IF_ERROR(get("context_length", &c.context, 1 << 22));
  for (int l = 0; l < c.n_layers; ++l)
    if (heads.values[l] % kv_heads.values[l] != 0)
      return Status::Corruption("head counts do not divide at layer " + std::to_string(l));
  c.head_dim = c.dim / c.n_heads;
  if (f.Find(p + "attention.key_length"))
    EVALD_RETURN_IF_ERROR(get("attention.key_length", &c.head_dim, 1 << 16));
  if (auto v = f.GetInt(p + "attention.value_length"); v && *v != c.head_dim)
    return Status::InvalidArgument(
        "attention.value_length different from key_length is not supported");
  if (gemma) c.embedding_scale = std::sqrt(static_cast<float>(c.dim));
  c.rope_dims = c.head_dim;
  if (f.Find(p + "rope.dimension_count"))
    EVALD_RETURN_IF_ERROR(get("rope.dimension_count", &c.rope_dims, 1 << 16));
  if (c.rope_dims > c.head_dim || c.rope_dims % 2 != 0)
    return Status::Corruption("bad rope.dimension_count");
  if (auto eps = f.GetFloat(p + "attention.layer_norm_rms_epsilon"))
    c.rms_eps = static_cast<float>(*eps);
  if (auto base = f.GetFloat(p + "rope.freq_base")) c.rope_base = static_cast<float>(*base);
  const GgufTensor* embd = f.FindTensor("token_embd.weight");
  if (!embd || embd->dims.size() != 2)
    return Status::NotFound("tensor token_embd.weight is missing");
  if (embd->dims[1] > (1u << 24)) return Status::Corruption("vocabulary too large");
  c.vocab = static_cast<int>(embd->dims[1]);
  if (auto v = f.GetInt(p + "vocab_size"); v && *v != c.vocab)
    return Status::Corruption("vocab_size disagrees with token_embd.weight");

  if (c.head_dim % 2 != 0 || (*arch == "llama" && c.head_dim * c.n_heads != c.dim))
    return Status::Corruption("head size does not fit the embedding length");
  // The scale of q.k: 1/sqrt(head size), except Gemma 2 and 3 27B (46 and 62 layers), which use
  // 1/sqrt(dim / heads) (query_pre_attn_scalar; as llama.cpp decides it).
  c.query_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  if ((*arch == "gemma2" && c.n_layers == 46) || (*arch == "gemma3" && c.n_layers == 62))
    c.query_scale = 1.0f / std::sqrt(static_cast<float>(c.dim / c.n_heads));
  EVALD_RETURN_IF_ERROR(ReadGemmaSettings(f, c.architecture, &c));
  EVALD_RETURN_IF_ERROR(BuildLayerShapes(f, heads, kv_heads, hidden, &c));
  if (c.architecture == "gemma4") EVALD_RETURN_IF_ERROR(RefuseUnsupportedGemma4(f));
  return Status::Ok();
}

}  // namespace

StatusOr<LlamaConfig> ReadLlamaConfig(const GgufFile& file) {
  LlamaConfig c;
  EVALD_RETURN_IF_ERROR(ReadConfig(file, &c));
  return c;
}

}  // namespace evald::kernels
