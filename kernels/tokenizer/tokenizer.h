// Text <-> token ids for a GGUF checkpoint: the interface the generator uses, the vocabulary
// every tokenizer reads from the file, and the choice by tokenizer.ggml.model ("llama":
// SentencePiece, SpmTokenizer; "gpt2": byte-level BPE with the model's pre-tokenizer,
// BpeTokenizer).
#pragma once

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
  virtual std::vector<int> Encode(std::string_view text, bool add_bos) const = 0;
  // The bytes of one token (control and unused tokens give nothing).
  virtual std::string Piece(int token) const = 0;
  std::string Decode(const std::vector<int>& tokens) const;

  int bos() const { return bos_; }  // -1: none
  int eos() const { return eos_; }
  bool add_bos() const { return add_bos_; }
  virtual int vocab_size() const = 0;

 protected:
  int bos_ = -1, eos_ = -1;
  bool add_bos_ = false;
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

// Length of the UTF-8 sequence a lead byte starts (1 for an invalid one: a character of its own).
size_t Utf8SequenceLength(unsigned char lead);

// The tokenizer tokenizer.ggml.model names.
StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const GgufFile& file);

}  // namespace evald::kernels
