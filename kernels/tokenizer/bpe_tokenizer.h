// GPT-2 style byte-level BPE over a GGUF vocabulary (tokenizer.ggml.model = "gpt2": Qwen2,
// Llama 3, DeepSeek-Coder, StarCoder ...): the text is split by the model's pre-tokenizer, each
// piece's bytes are mapped to GPT-2's printable stand-ins, adjacent symbols are merged by the
// rank of tokenizer.ggml.merges (lowest first, leftmost on ties), and what no token covers falls
// back to single-byte tokens - the procedure llama.cpp applies.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/tokenizer/pre_tokenizer.h"
#include "kernels/tokenizer/tokenizer.h"

namespace evald::kernels {

// tokenizer.ggml.merges as (left, right) -> rank: "left right", split at the first space after
// the first character (a side may itself be a stand-in for a space byte, never a literal space).
using MergeRanks = std::map<std::pair<std::string, std::string>, int, std::less<>>;
StatusOr<MergeRanks> ReadMergeRanks(const GgufFile& file);
// `text`'s characters merged pairwise by rank (lowest first, leftmost on ties): the symbols left.
std::vector<std::string_view> MergeByRank(std::string_view text, const MergeRanks& ranks);

class BpeTokenizer : public Tokenizer {
 public:
  static StatusOr<BpeTokenizer> FromGguf(const GgufFile& file);

  std::string Piece(int token) const override;

  int vocab_size() const override { return static_cast<int>(tokens_.size()); }

 private:
  void EncodeText(std::string_view text, bool after_special, std::vector<int>* out) const override;
  void EncodePiece(std::string_view piece, std::vector<int>* out) const;

  std::vector<std::string> tokens_;  // as stored: bytes written as GPT-2's stand-in characters
  std::vector<TokenType> types_;
  std::vector<std::string> pieces_;  // each token's bytes (empty for control tokens)
  std::unordered_map<std::string, int> index_;
  MergeRanks ranks_;
  std::shared_ptr<PreTokenizer> pre_;
};

// GPT-2's byte <-> printable character mapping (bytes_to_unicode), as UTF-8.
const std::string& ByteStandIn(uint8_t byte);

}  // namespace evald::kernels
