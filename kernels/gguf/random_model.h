// Random-weight checkpoints in GGUF, for tests and benchmarks of architectures and shapes no
// shared file covers (qwen2, gemma; Llama 1.1B shapes). The vocabulary is copied from a real file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "kernels/gguf/ggml_types.h"
#include "kernels/gguf/gguf_file.h"

namespace evald::kernels {

struct RandomModelShape {
  std::string architecture = "llama";  // llama | qwen2 | gemma | gemma2 | gemma3 | gemma4
  int dim = 64, layers = 2, heads = 4, kv_heads = 2, hidden = 128, context = 256;
  int head_dim = 0;                       // 0: dim / heads
  GgmlType weight_type = GgmlType::kF32;  // F32, Q8_0 or Q4_0 for the 2-D weights
  float scale = 0.1f;                     // standard deviation of the weights
  uint64_t seed = 1;
  // gemma2 / gemma3 (0: the architecture's defaults)
  int sliding_window = 0;
  float attn_softcap = 0, final_softcap = 0;  // gemma2
  std::string chat_template;                  // tokenizer.chat_template (replacing the vocab's)
  // gemma4 (head_dim and kv_heads are the full layers'): the sliding layers' head size and KV
  // heads; one full layer in every `full_every` (the last of each group); full layers without a
  // value projection; the share of their RoPE pairs that rotate (proportional RoPE).
  int head_dim_swa = 0, kv_heads_swa = 0, full_every = 6;
  float rotary_share = 0.25f;
  bool omit_final_softcap = false;  // gemma4: no final_logit_softcapping key (readers default it)
  // Written after the shape's own keys (tests of files the core must refuse).
  std::vector<std::pair<std::string, GgufValue>> extra_metadata;
};

// Writes the model to `path` with the tokenizer of `vocab_source` (a GGUF file).
Status WriteRandomModel(const RandomModelShape& shape, const std::string& vocab_source,
                        const std::string& path);

// A published model's shape at full size, for memory planning: the shape and its vocabulary.
struct ModelLayout {
  RandomModelShape shape;
  int vocab = 0;
};
// "gemma4-31b" or "llama2-7b", its 2-D weights in `type`.
StatusOr<ModelLayout> KnownModelLayout(std::string_view name, GgmlType type);
// The layout as a GGUF file: metadata and tensor table as the real file has them, the weights a
// hole (a sparse file: its full size apparent, a few kilobytes on disk). No tokenizer.
Status WriteModelLayout(const ModelLayout& layout, const std::string& path);

// A GPT-2 style byte-level BPE vocabulary learned from `corpus` (split by the `pre`
// pre-tokenizer; the most frequent adjacent pair merged first, `merges` times): 256 byte tokens,
// the merged tokens, and the control tokens <|endoftext|> (BOS/EOS), <|im_start|>, <|im_end|>.
// Written as a GGUF holding only tokenizer.* metadata, for WriteRandomModel's vocab_source.
// `pre` "gemma4": Gemma 4's kind instead (tokenizer.ggml.model = gemma4): the corpus's own
// characters with spaces as U+2581, the 256 <0xXX> byte tokens, newline runs, <pad> <eos> <bos>
// <unk>, merges learned over characters within runs of non-newlines.
Status WriteBpeVocabulary(const std::string& pre, const std::string& corpus, int merges,
                          const std::string& path);

}  // namespace evald::kernels
