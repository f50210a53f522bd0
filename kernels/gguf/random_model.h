// Random-weight checkpoints in GGUF, for tests and benchmarks of architectures and shapes no
// shared file covers (qwen2, gemma; Llama 1.1B shapes). The vocabulary is copied from a real file.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "kernels/gguf/ggml_types.h"

namespace evald::kernels {

struct RandomModelShape {
  std::string architecture = "llama";  // llama | qwen2 | gemma | gemma2 | gemma3
  int dim = 64, layers = 2, heads = 4, kv_heads = 2, hidden = 128, context = 256;
  int head_dim = 0;                       // 0: dim / heads
  GgmlType weight_type = GgmlType::kF32;  // F32, Q8_0 or Q4_0 for the 2-D weights
  float scale = 0.1f;                     // standard deviation of the weights
  uint64_t seed = 1;
  // gemma2 / gemma3 (0: the architecture's defaults)
  int sliding_window = 0;
  float attn_softcap = 0, final_softcap = 0;  // gemma2
};

// Writes the model to `path` with the tokenizer of `vocab_source` (a GGUF file).
Status WriteRandomModel(const RandomModelShape& shape, const std::string& vocab_source,
                        const std::string& path);

// A GPT-2 style byte-level BPE vocabulary learned from `corpus` (split by the `pre`
// pre-tokenizer; the most frequent adjacent pair merged first, `merges` times): 256 byte tokens,
// the merged tokens, and the control tokens <|endoftext|> (BOS/EOS), <|im_start|>, <|im_end|>.
// Written as a GGUF holding only tokenizer.* metadata, for WriteRandomModel's vocab_source.
Status WriteBpeVocabulary(const std::string& pre, const std::string& corpus, int merges,
                          const std::string& path);

}  // namespace evald::kernels
