#include "kernels/tokenizer/spm_bpe_tokenizer.h"

#include <cstdio>

namespace evald::kernels {

namespace {

constexpr std::string_view kSpace = "\xe2\x96\x81";  // U+2581

}  // namespace

StatusOr<SpmBpeTokenizer> SpmBpeTokenizer::FromGguf(const GgufFile& f) {
  // Gemma 4's conventions: <bos> 2, <eos> 1, and a BOS always added (llama.cpp forces it).
  auto vocab = GgufVocabulary::Read(f, /*bos=*/2, /*eos=*/1, /*add_bos=*/true);
  if (!vocab.ok()) return vocab.status();
  SpmBpeTokenizer t;
  t.tokens_ = std::move(vocab->tokens);
  t.types_ = std::move(vocab->types);
  t.bos_ = vocab->bos;
  t.eos_ = vocab->eos;
  t.add_bos_ = true;
  const size_t n = t.tokens_.size();
  t.pieces_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const std::string& s = t.tokens_[i];
    t.index_.emplace(s, static_cast<int>(i));
    unsigned byte = 0;
    if (t.types_[i] == TokenType::kControl || t.types_[i] == TokenType::kUnused) continue;
    if (t.types_[i] == TokenType::kByte && s.size() == 6 &&
        std::sscanf(s.c_str(), "<0x%2X>", &byte) == 1) {
      t.pieces_[i] = std::string(1, static_cast<char>(byte));
    } else {
      t.pieces_[i] = UnescapeSentencePieceSpaces(s);
    }
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    auto it = t.index_.find(name);
    t.byte_tokens_[b] = it == t.index_.end() ? -1 : it->second;
  }
  auto ranks = ReadMergeRanks(f);
  if (!ranks.ok()) return ranks.status();
  t.ranks_ = std::move(*ranks);
  t.IndexSpecialTokens(t.tokens_, t.types_);
  return t;
}

void SpmBpeTokenizer::EncodeText(std::string_view raw, bool, std::vector<int>* out) const {
  std::string text;  // spaces escaped before anything is split
  text.reserve(raw.size());
  for (char c : raw) {
    if (c == ' ') {
      text += kSpace;
    } else {
      text += c;
    }
  }
  // Runs of newlines and runs of everything else ([^\n]+|[\n]+).
  for (size_t start = 0; start < text.size();) {
    const bool newlines = text[start] == '\n';
    size_t end = start;
    while (end < text.size() && (text[end] == '\n') == newlines) ++end;
    EncodeRun(std::string_view(text).substr(start, end - start), out);
    start = end;
  }
}

void SpmBpeTokenizer::EncodeRun(std::string_view run, std::vector<int>* out) const {
  if (run[0] == '\n') {  // a newline run that is a token stays whole
    auto it = index_.find(std::string(run));
    if (it != index_.end()) {
      out->push_back(it->second);
      return;
    }
  }
  for (std::string_view symbol : MergeByRank(run, ranks_)) {
    auto it = index_.find(std::string(symbol));
    if (it != index_.end()) {
      out->push_back(it->second);
      continue;
    }
    for (unsigned char c : symbol)  // byte fallback
      if (byte_tokens_[c] >= 0) out->push_back(byte_tokens_[c]);
  }
}

std::string SpmBpeTokenizer::Piece(int token) const {
  if (token < 0 || token >= vocab_size()) return "";
  return pieces_[static_cast<size_t>(token)];
}

}  // namespace evald::kernels
