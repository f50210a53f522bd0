// SentencePiece-style tokenizer over a GGUF vocabulary (tokenizer.ggml.model = "llama"):
// whitespace escaped to U+2581 with a leading space, UTF-8 characters merged pairwise by the
// vocabulary's scores (highest first, leftmost on ties), byte fallback (<0xXX>) for characters
// the vocabulary lacks - the procedure llama.cpp applies to these models.
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "kernels/gguf/gguf_file.h"
#include "kernels/tokenizer/tokenizer.h"

namespace evald::kernels {

class SpmTokenizer : public Tokenizer {
 public:
  static StatusOr<SpmTokenizer> FromGguf(const GgufFile& file);

  // The text of one token (byte tokens give their byte; control tokens give nothing).
  std::string Piece(int token) const override;

  int vocab_size() const override { return static_cast<int>(tokens_.size()); }

 private:
  void EncodeText(std::string_view text, bool after_special, std::vector<int>* out) const override;

  std::vector<std::string> tokens_;
  std::vector<float> scores_;
  std::vector<TokenType> types_;
  std::map<std::string, int, std::less<>> index_;
  std::array<int, 256> byte_tokens_;
  int unk_ = 0;
  bool add_space_prefix_ = true;
};

}  // namespace evald::kernels
