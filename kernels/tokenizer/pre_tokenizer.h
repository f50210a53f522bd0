// The regular-expression split that byte-level BPE vocabularies apply before merging, chosen by
// tokenizer.ggml.pre: the GPT-2 pattern, Llama 3's ("llama-bpe"), Qwen2's, DeepSeek-Coder's
// sequence of patterns. Matched with PCRE2 (UTF, Unicode properties for \p{L}, \p{N}, \s);
// invalid UTF-8 never matches and stays a piece of its own, so no input is lost.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace evald::kernels {

class PreTokenizer {
 public:
  static StatusOr<std::unique_ptr<PreTokenizer>> ForName(const std::string& pre);
  ~PreTokenizer();

  // The text cut into pieces (their concatenation is the text).
  std::vector<std::string_view> Split(std::string_view text) const;
  // Llama 3 looks a whole piece up in the vocabulary before merging.
  bool ignore_merges() const { return ignore_merges_; }

 private:
  struct Pattern;
  PreTokenizer() = default;
  std::vector<std::unique_ptr<Pattern>> patterns_;  // applied in turn to every piece
  bool ignore_merges_ = false;
};

}  // namespace evald::kernels
