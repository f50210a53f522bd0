// Text <-> token ids for a GGUF checkpoint: the interface the generator uses, the vocabulary
// every tokenizer reads from the file, and the choice by tokenizer.ggml.model ("llama":
// SentencePiece, SpmTokenizer; "gpt2": byte-level BPE with the model's pre-tokenizer,
// BpeTokenizer).
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "kernels/gguf/gguf_file.h"

namespace evald::kernels {

enum class TokenType {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Plain text: every byte is text, a token's string in it is not that token.
  std::vector<int> Encode(std::string_view text, bool add_bos) const;
  // Text in which the strings of control, user-defined and unknown tokens stand for those tokens
  // (what a chat template renders): split there - at each position the longest such string -
  // and the text between encoded as Encode does, as llama.cpp tokenizes with parse_special.
  std::vector<int> EncodeWithSpecialTokens(std::string_view text, bool add_bos) const;
  // The special token whose string is exactly `text` ("<end_of_turn>"), or -1.
  int SpecialToken(std::string_view text) const;
  // The bytes of one token (control and unused tokens give nothing).
  virtual std::string Piece(int token) const = 0;
  std::string Decode(const std::vector<int>& tokens) const;

  int bos() const { return bos_; }                           // -1: none
  const std::string& bos_text() const { return bos_text_; }  // its string ("<s>", "<bos>")
  int eos() const { return eos_; }
  bool add_bos() const { return add_bos_; }
  virtual int vocab_size() const = 0;

 protected:
  // Raw text. `after_special`: it starts the input or follows a special token (where
  // SentencePiece puts its space prefix).
  virtual void EncodeText(std::string_view text, bool after_special,
                          std::vector<int>* out) const = 0;
  // Called once the vocabulary is read: which strings EncodeWithSpecialTokens recognises.
  void IndexSpecialTokens(const std::vector<std::string>& tokens,
                          const std::vector<TokenType>& types);

  int bos_ = -1, eos_ = -1;
  bool add_bos_ = false;

 private:
  std::string bos_text_;
  std::map<std::string, int, std::less<>> specials_;
  // Per first byte: the lengths of the special strings starting with it, longest first (so a
  // position is tried against a few lengths, not the whole vocabulary).
  std::vector<std::vector<size_t>> special_lengths_ = std::vector<std::vector<size_t>>(256);
};

// What both tokenizer kinds read from tokenizer.ggml.*: the token strings (validated), their
// types and scores, the special ids (checked against the vocabulary size).
struct GgufVocabulary {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<TokenType> types;
  int bos = -1, eos = -1, unk = -1;
  bool add_bos = false;

  // `default_bos`/`default_eos`/`default_add_bos`: the kind's conventions when a key is absent.
  static StatusOr<GgufVocabulary> Read(const GgufFile& file, int default_bos, int default_eos,
                                       bool default_add_bos);
};

// The merge loop both tokenizers share: `text` cut into UTF-8 characters, then repeatedly the
// adjacent pair with the smallest priority (leftmost on ties) merged, until no pair has one.
// `priority(left, right)` is empty when the two may not merge. Returns the final pieces.
std::vector<std::string_view> MergeByPriority(
    std::string_view text,
    const std::function<std::optional<double>(std::string_view, std::string_view)>& priority);

// The bytes a SentencePiece-style token stands for: a byte token (<0xXX>) its byte, a control
// or unused token nothing, any other its text with visible spaces unescaped.
std::string SentencePieceTokenBytes(const std::string& token, TokenType type);
// The ids of the 256 byte tokens <0x00>..<0xFF> by name (`find` gives -1 for a missing one);
// `missing` where the vocabulary lacks one.
std::array<int, 256> ByteTokenIds(const std::function<int(const std::string&)>& find, int missing);

// SentencePiece's visible space, U+2581, standing for ' ' in token strings.
inline constexpr std::string_view kSentencePieceSpace = "\xe2\x96\x81";
// A SentencePiece token's text: its visible spaces back to spaces.
std::string UnescapeSentencePieceSpaces(std::string_view token);

// Length of the UTF-8 sequence a lead byte starts (1 for an invalid one: a character of its own).
size_t Utf8SequenceLength(unsigned char lead);

// The tokenizer tokenizer.ggml.model names.
StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const GgufFile& file);

}  // namespace evald::kernels
