#include "kernels/gguf/random_model.h"

#include <cstdio>
#include <map>
#include <random>

#include "kernels/gguf/gguf_file.h"
#include "kernels/gguf/gguf_writer.h"
#include "kernels/quant/blocks.h"
#include "kernels/tokenizer/bpe_tokenizer.h"
#include "kernels/tokenizer/pre_tokenizer.h"

namespace evald::kernels {

namespace {

GgufValue U32(uint64_t v) {
  GgufValue g;
  g.type = GgufType::kUint32;
  g.u = v;
  return g;
}
GgufValue F32(double v) {
  GgufValue g;
  g.type = GgufType::kFloat32;
  g.f = v;
  return g;
}
GgufValue Str(const std::string& s) {
  GgufValue g;
  g.type = GgufType::kString;
  g.s = s;
  return g;
}

GgufValue Array(GgufType type, const std::vector<GgufValue>& values) {
  GgufValue g;
  g.type = GgufType::kArray;
  g.array_type = type;
  g.array = values;
  return g;
}

bool Gemma4Sliding(const RandomModelShape& shape, int l) {
  return l % shape.full_every != shape.full_every - 1;
}

// Gemma 4's keys: per-layer KV heads and sliding flags, head sizes per layer kind, no KV sharing
// or per-layer embeddings (the dense 31B layout).
void SetGemma4Metadata(const RandomModelShape& shape, int head_dim, GgufWriter& w) {
  const std::string a = "gemma4.";
  std::vector<GgufValue> kv_heads, sliding;
  for (int l = 0; l < shape.layers; ++l) {
    const bool swa = Gemma4Sliding(shape, l);
    kv_heads.push_back(U32(static_cast<uint64_t>(swa ? shape.kv_heads_swa : shape.kv_heads)));
    GgufValue flag;
    flag.type = GgufType::kBool;
    flag.u = swa ? 1 : 0;
    sliding.push_back(flag);
  }
  w.SetMetadata(a + "attention.head_count_kv", Array(GgufType::kUint32, kv_heads));
  w.SetMetadata(a + "attention.sliding_window_pattern", Array(GgufType::kBool, sliding));
  w.SetMetadata(a + "attention.sliding_window",
                U32(static_cast<uint64_t>(shape.sliding_window ? shape.sliding_window : 512)));
  w.SetMetadata(a + "attention.key_length", U32(static_cast<uint64_t>(head_dim)));
  w.SetMetadata(a + "attention.value_length", U32(static_cast<uint64_t>(head_dim)));
  w.SetMetadata(a + "attention.key_length_swa", U32(static_cast<uint64_t>(shape.head_dim_swa)));
  w.SetMetadata(a + "attention.value_length_swa", U32(static_cast<uint64_t>(shape.head_dim_swa)));
  w.SetMetadata(a + "rope.dimension_count", U32(static_cast<uint64_t>(head_dim)));
  w.SetMetadata(a + "rope.dimension_count_swa", U32(static_cast<uint64_t>(shape.head_dim_swa)));
  w.SetMetadata(a + "rope.freq_base_swa", F32(10000.0));
  w.SetMetadata(a + "attention.shared_kv_layers", U32(0));
  w.SetMetadata(a + "embedding_length_per_layer_input", U32(0));
  if (!shape.omit_final_softcap)
    w.SetMetadata(a + "final_logit_softcapping",
                  F32(shape.final_softcap ? shape.final_softcap : 30.0));
}

// The architecture's metadata for the shape, and the vocabulary's tokenizer keys.
void SetShapeMetadata(const RandomModelShape& shape, int head_dim, const GgufFile* vocab,
                      GgufWriter& w) {
  const std::string& a = shape.architecture;
  w.SetMetadata("general.architecture", Str(a));
  w.SetMetadata("general.name", Str("evald random " + a));
  w.SetMetadata(a + ".embedding_length", U32(static_cast<uint64_t>(shape.dim)));
  w.SetMetadata(a + ".block_count", U32(static_cast<uint64_t>(shape.layers)));
  w.SetMetadata(a + ".feed_forward_length", U32(static_cast<uint64_t>(shape.hidden)));
  w.SetMetadata(a + ".attention.head_count", U32(static_cast<uint64_t>(shape.heads)));
  if (a != "gemma4")
    w.SetMetadata(a + ".attention.head_count_kv", U32(static_cast<uint64_t>(shape.kv_heads)));
  w.SetMetadata(a + ".context_length", U32(static_cast<uint64_t>(shape.context)));
  w.SetMetadata(a + ".attention.layer_norm_rms_epsilon", F32(1e-6));
  w.SetMetadata(a + ".rope.freq_base", F32(a == "gemma3" || a == "gemma4" ? 1000000.0 : 10000.0));
  if (a == "gemma4") SetGemma4Metadata(shape, head_dim, w);
  if (a == "gemma2" || a == "gemma3")
    w.SetMetadata(a + ".attention.sliding_window",
                  U32(static_cast<uint64_t>(shape.sliding_window ? shape.sliding_window
                                            : a == "gemma2"      ? 4096
                                                                 : 512)));
  if (a == "gemma2") {
    w.SetMetadata(a + ".attn_logit_softcapping",
                  F32(shape.attn_softcap ? shape.attn_softcap : 50.0));
    w.SetMetadata(a + ".final_logit_softcapping",
                  F32(shape.final_softcap ? shape.final_softcap : 30.0));
  }
  if (shape.head_dim && a != "gemma4") {
    w.SetMetadata(a + ".attention.key_length", U32(static_cast<uint64_t>(head_dim)));
    w.SetMetadata(a + ".attention.value_length", U32(static_cast<uint64_t>(head_dim)));
  }
  if (vocab)
    for (const auto& [k, v] : vocab->metadata())
      if (k.rfind("tokenizer.", 0) == 0) w.SetMetadata(k, v);
  if (!shape.chat_template.empty())
    w.SetMetadata("tokenizer.chat_template", Str(shape.chat_template));
  for (const auto& [k, v] : shape.extra_metadata) w.SetMetadata(k, v);
}

// Tensors of normal random values, drawn in the order they are added; or, for a layout, only
// their shapes (zeros, never in memory).
class RandomTensors {
 public:
  RandomTensors(const RandomModelShape& shape, GgufWriter& w, bool layout)
      : w_(w), layout_(layout), rng_(shape.seed), dist_(0.0f, shape.scale) {}

  void Matrix(const std::string& name, int cols, int rows, GgmlType type) {
    if (layout_) {
      w_.AddTensorLayout(name, type == GgmlType::kF32 || cols % kQK != 0 ? GgmlType::kF32 : type,
                         {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)});
      return;
    }
    std::vector<float> values(static_cast<size_t>(cols) * rows);
    for (auto& v : values) v = dist_(rng_);
    if (type == GgmlType::kF32 || cols % kQK != 0) {
      w_.AddTensor(name, GgmlType::kF32, {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)},
                   std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
      return;
    }
    const uint64_t row_bytes = *RowBytes(type, static_cast<uint64_t>(cols));
    std::string bytes(row_bytes * rows, '\0');
    for (int r = 0; r < rows; ++r) {
      void* dst = bytes.data() + r * row_bytes;
      const float* src = values.data() + static_cast<size_t>(r) * cols;
      if (type == GgmlType::kQ8_0) {
        QuantizeRowQ8_0(src, static_cast<BlockQ8_0*>(dst), cols);
      } else {
        QuantizeRowQ4_0(src, static_cast<BlockQ4_0*>(dst), cols);
      }
    }
    w_.AddTensor(name, type, {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)},
                 std::move(bytes));
  }

  // A norm's weights (about 1) or a bias (about 0).
  void Vector(const std::string& name, int n, bool ones) {
    if (layout_) {
      w_.AddTensorLayout(name, GgmlType::kF32, {static_cast<uint64_t>(n)});
      return;
    }
    std::vector<float> values(static_cast<size_t>(n));
    for (auto& v : values) v = ones ? 1.0f + dist_(rng_) : dist_(rng_);
    w_.AddTensor(name, GgmlType::kF32, {static_cast<uint64_t>(n)},
                 std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
  }

 private:
  GgufWriter& w_;
  bool layout_;
  std::mt19937_64 rng_;
  std::normal_distribution<float> dist_;
};

void AddLayer(const RandomModelShape& shape, int l, int full_head_dim, RandomTensors& t) {
  const std::string& a = shape.architecture;
  const bool gemma4_swa = a == "gemma4" && Gemma4Sliding(shape, l);
  const int head_dim = gemma4_swa ? shape.head_dim_swa : full_head_dim;
  const int kv_heads = gemma4_swa ? shape.kv_heads_swa : shape.kv_heads;
  const int q_dim = shape.heads * head_dim, kv_dim = kv_heads * head_dim;
  const std::string b = "blk." + std::to_string(l) + ".";
  t.Vector(b + "attn_norm.weight", shape.dim, true);
  t.Vector(b + "ffn_norm.weight", shape.dim, true);
  t.Matrix(b + "attn_q.weight", shape.dim, q_dim, shape.weight_type);
  t.Matrix(b + "attn_k.weight", shape.dim, kv_dim, shape.weight_type);
  // Gemma 4's full layers take their values from the key projection (no attn_v).
  if (a != "gemma4" || gemma4_swa)
    t.Matrix(b + "attn_v.weight", shape.dim, kv_dim, shape.weight_type);
  t.Matrix(b + "attn_output.weight", q_dim, shape.dim, shape.weight_type);
  if (a == "gemma2" || a == "gemma3" || a == "gemma4") {
    t.Vector(b + "post_attention_norm.weight", shape.dim, true);
    t.Vector(b + "post_ffw_norm.weight", shape.dim, true);
  }
  if (a == "gemma4") t.Vector(b + "layer_output_scale.weight", 1, true);
  if (a == "gemma3" || a == "gemma4") {
    t.Vector(b + "attn_q_norm.weight", head_dim, true);
    t.Vector(b + "attn_k_norm.weight", head_dim, true);
  }
  if (a == "qwen2") {
    t.Vector(b + "attn_q.bias", q_dim, false);
    t.Vector(b + "attn_k.bias", kv_dim, false);
    t.Vector(b + "attn_v.bias", kv_dim, false);
  }
  t.Matrix(b + "ffn_gate.weight", shape.dim, shape.hidden, shape.weight_type);
  t.Matrix(b + "ffn_up.weight", shape.dim, shape.hidden, shape.weight_type);
  t.Matrix(b + "ffn_down.weight", shape.hidden, shape.dim, shape.weight_type);
}

}  // namespace

namespace {

// The model's metadata and tensors into `w`: random values, or (`layout`) shapes only.
void AddModel(const RandomModelShape& shape, int n_vocab, const GgufFile* vocab, bool layout,
              GgufWriter& w) {
  const int head_dim = shape.head_dim ? shape.head_dim : shape.dim / shape.heads;
  SetShapeMetadata(shape, head_dim, vocab, w);
  RandomTensors t(shape, w, layout);
  t.Matrix("token_embd.weight", shape.dim, n_vocab, shape.weight_type);
  t.Vector("output_norm.weight", shape.dim, true);
  // Gemma ties the output to the embedding.
  if (shape.architecture.rfind("gemma", 0) != 0)
    t.Matrix("output.weight", shape.dim, n_vocab, shape.weight_type);
  if (shape.architecture == "gemma4") {
    // Proportional RoPE on the full layers: the first rotary_share of the pairs turn at the usual
    // frequencies, the others not at all (divisors so large their angles vanish).
    const int pairs = head_dim / 2, rotated = static_cast<int>(pairs * shape.rotary_share);
    std::vector<float> divisors(static_cast<size_t>(pairs), 1.0f);
    for (int i = rotated; i < pairs; ++i) divisors[static_cast<size_t>(i)] = 1e30f;
    w.AddTensor("rope_freqs.weight", GgmlType::kF32, {static_cast<uint64_t>(pairs)},
                std::string(reinterpret_cast<const char*>(divisors.data()), divisors.size() * 4));
  }
  for (int l = 0; l < shape.layers; ++l) AddLayer(shape, l, head_dim, t);
}

}  // namespace

Status WriteRandomModel(const RandomModelShape& shape, const std::string& vocab_source,
                        const std::string& path) {
  auto vocab = GgufFile::Open(vocab_source);
  if (!vocab.ok()) return vocab.status();
  const GgufValue* tokens = (*vocab)->Find("tokenizer.ggml.tokens");
  if (!tokens) return Status::NotFound(vocab_source + " has no vocabulary");
  GgufWriter w;
  AddModel(shape, static_cast<int>(tokens->array.size()), vocab->get(), false, w);
  return w.Write(path);
}

Status WriteModelLayout(const ModelLayout& layout, const std::string& path) {
  GgufWriter w;
  AddModel(layout.shape, layout.vocab, nullptr, true, w);
  return w.WriteLayout(path);
}

StatusOr<ModelLayout> KnownModelLayout(std::string_view name, GgmlType type) {
  ModelLayout l;
  RandomModelShape& s = l.shape;
  s.weight_type = type;
  if (name == "gemma4-31b") {
    // Gemma 4 31B as its GGUF files describe it: 60 layers of 5376, 32 heads; sliding layers
    // (five in six, window 1024) with 16 KV heads of 256, full layers with 4 KV heads of 512
    // and values from the keys; FFN 21504; 262144 tokens, tied embeddings; 256k context.
    s.architecture = "gemma4";
    s.dim = 5376, s.layers = 60, s.heads = 32, s.hidden = 21504, s.context = 262144;
    s.head_dim = 512, s.kv_heads = 4, s.head_dim_swa = 256, s.kv_heads_swa = 16;
    s.sliding_window = 1024, s.final_softcap = 30.0f;
    l.vocab = 262144;
    return l;
  }
  if (name == "llama2-7b") {
    s.architecture = "llama";
    s.dim = 4096, s.layers = 32, s.heads = 32, s.kv_heads = 32, s.hidden = 11008, s.context = 4096;
    l.vocab = 32000;
    return l;
  }
  return Status::InvalidArgument("unknown layout '" + std::string(name.substr(0, 40)) +
                                 "' (gemma4-31b, llama2-7b)");
}

namespace {

using Words = std::map<std::vector<std::string>, int>;  // a word's symbols -> its count

// The most frequent adjacent pair merged, `merges` times: each merge appended to `merge_list`
// ("left right") and its result to `tokens`.
void LearnMerges(Words words, int merges, std::vector<std::string>* tokens,
                 std::vector<std::string>* merge_list) {
  for (int m = 0; m < merges; ++m) {
    std::map<std::pair<std::string, std::string>, int> pairs;
    for (const auto& [w, count] : words)
      for (size_t i = 1; i < w.size(); ++i) pairs[{w[i - 1], w[i]}] += count;
    if (pairs.empty()) break;
    auto best = pairs.begin();
    for (auto it = pairs.begin(); it != pairs.end(); ++it)
      if (it->second > best->second) best = it;
    const auto [left, right] = best->first;
    merge_list->push_back(left + " " + right);
    tokens->push_back(left + right);
    Words merged;
    for (const auto& [w, count] : words) {
      std::vector<std::string> out;
      for (size_t i = 0; i < w.size(); ++i) {
        if (i + 1 < w.size() && w[i] == left && w[i + 1] == right) {
          out.push_back(left + right);
          ++i;
        } else {
          out.push_back(w[i]);
        }
      }
      merged[out] += count;
    }
    words = std::move(merged);
  }
}

GgufValue Strings(const std::vector<std::string>& items) {
  GgufValue v;
  v.type = GgufType::kArray;
  v.array_type = GgufType::kString;
  for (const auto& item : items) v.array.push_back(Str(item));
  return v;
}

GgufValue Int32s(const std::vector<int>& items) {
  GgufValue v;
  v.type = GgufType::kArray;
  v.array_type = GgufType::kInt32;
  for (int t : items) {
    GgufValue e;
    e.type = GgufType::kInt32;
    e.i = t;
    v.array.push_back(e);
  }
  return v;
}

GgufValue Bool(bool b) {
  GgufValue v;
  v.type = GgufType::kBool;
  v.u = b ? 1 : 0;
  return v;
}

// Gemma 4's kind: <pad> <eos> <bos> <unk> first, the 256 byte tokens, the corpus's characters
// (spaces as U+2581) and runs of one and two newlines, then the merges over characters.
Status WriteGemma4Vocabulary(const std::string& corpus, int merges, const std::string& path) {
  std::string text;
  for (char c : corpus) text += c == ' ' ? std::string("\xe2\x96\x81") : std::string(1, c);
  Words words;
  std::vector<std::string> tokens = {"<pad>", "<eos>", "<bos>", "<unk>"};
  std::vector<int> types = {3, 3, 3, 2};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    tokens.push_back(name);
    types.push_back(6);
  }
  std::map<std::string, bool> characters;
  for (size_t start = 0; start < text.size();) {
    const bool newlines = text[start] == '\n';
    size_t end = start;
    while (end < text.size() && (text[end] == '\n') == newlines) ++end;
    if (!newlines) {
      std::vector<std::string> symbols;
      for (size_t i = start; i < end;) {
        size_t len = std::min(Utf8SequenceLength(static_cast<unsigned char>(text[i])), end - i);
        symbols.push_back(text.substr(i, len));
        characters[symbols.back()] = true;
        i += len;
      }
      ++words[symbols];
    }
    start = end;
  }
  for (const auto& [c, unused] : characters) tokens.push_back(c);
  tokens.push_back("\n");
  tokens.push_back("\n\n");
  std::vector<std::string> merge_list;
  LearnMerges(std::move(words), merges, &tokens, &merge_list);
  types.resize(tokens.size(), 1);
  GgufWriter w;
  w.SetMetadata("general.architecture", Str("gemma4"));
  w.SetMetadata("tokenizer.ggml.model", Str("gemma4"));
  w.SetMetadata("tokenizer.ggml.tokens", Strings(tokens));
  w.SetMetadata("tokenizer.ggml.token_type", Int32s(types));
  w.SetMetadata("tokenizer.ggml.merges", Strings(merge_list));
  w.SetMetadata("tokenizer.ggml.bos_token_id", U32(2));
  w.SetMetadata("tokenizer.ggml.eos_token_id", U32(1));
  w.SetMetadata("tokenizer.ggml.unknown_token_id", U32(3));
  w.SetMetadata("tokenizer.ggml.padding_token_id", U32(0));
  w.SetMetadata("tokenizer.ggml.add_bos_token", Bool(true));
  w.SetMetadata("tokenizer.ggml.add_space_prefix", Bool(false));
  return w.Write(path);
}

}  // namespace

Status WriteBpeVocabulary(const std::string& pre, const std::string& corpus, int merges,
                          const std::string& path) {
  if (pre == "gemma4") return WriteGemma4Vocabulary(corpus, merges, path);
  auto splitter = PreTokenizer::ForName(pre);
  if (!splitter.ok()) return splitter.status();
  // Words as sequences of symbols (stand-in characters), with their counts.
  Words words;
  for (std::string_view piece : (*splitter)->Split(corpus)) {
    std::vector<std::string> symbols;
    for (unsigned char c : piece) symbols.push_back(ByteStandIn(c));
    ++words[symbols];
  }
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.push_back(ByteStandIn(static_cast<uint8_t>(b)));
  std::vector<std::string> merge_list;
  LearnMerges(std::move(words), merges, &tokens, &merge_list);
  std::vector<int> types(tokens.size(), 1);
  const int eot = static_cast<int>(tokens.size());
  for (const char* special : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}) {
    tokens.push_back(special);
    types.push_back(3);
  }
  GgufWriter w;
  w.SetMetadata("general.architecture", Str("qwen2"));
  w.SetMetadata("tokenizer.ggml.model", Str("gpt2"));
  w.SetMetadata("tokenizer.ggml.pre", Str(pre));
  w.SetMetadata("tokenizer.ggml.tokens", Strings(tokens));
  w.SetMetadata("tokenizer.ggml.token_type", Int32s(types));
  w.SetMetadata("tokenizer.ggml.merges", Strings(merge_list));
  w.SetMetadata("tokenizer.ggml.bos_token_id", U32(static_cast<uint64_t>(eot)));
  w.SetMetadata("tokenizer.ggml.eos_token_id", U32(static_cast<uint64_t>(eot)));
  w.SetMetadata("tokenizer.ggml.add_bos_token", Bool(false));
  return w.Write(path);
}

}  // namespace evald::kernels
