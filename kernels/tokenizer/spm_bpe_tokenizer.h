// SentencePiece-style BPE over a GGUF vocabulary (tokenizer.ggml.model = "gemma4"): spaces
// escaped to U+2581, the text split only into runs of newlines and runs of everything else, a
// newline run that is a token kept whole, adjacent UTF-8 characters merged by the rank of
// tokenizer.ggml.merges (lowest first, leftmost on ties), and what no token covers spelled as
// <0xXX> byte tokens - the procedure llama.cpp applies to Gemma 4's vocabulary. Unlike GPT-2's
// BPE there is no byte-to-character mapping: the tokens are the text's own characters.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kernels/tokenizer/bpe_tokenizer.h"
#include "kernels/tokenizer/tokenizer.h"

namespace evald::kernels {

class SpmBpeTokenizer : public Tokenizer {
 public:
  static StatusOr<SpmBpeTokenizer> FromGguf(const GgufFile& file);

  std::string Piece(int token) const override;
  int vocab_size() const override { return static_cast<int>(tokens_.size()); }

 private:
  void EncodeText(std::string_view text, bool after_special, std::vector<int>* out) const override;
  void EncodeRun(std::string_view run, std::vector<int>* out) const;

  std::vector<std::string> tokens_;
  std::vector<TokenType> types_;
  std::vector<std::string> pieces_;  // each token's bytes (U+2581 as a space; <0xXX> as its byte)
  std::unordered_map<std::string, int> index_;
  MergeRanks ranks_;
  std::array<int, 256> byte_tokens_;  // -1 where the vocabulary has no <0xXX>
};

}  // namespace evald::kernels
