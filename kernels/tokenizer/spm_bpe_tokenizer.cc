#include "kernels/tokenizer/spm_bpe_tokenizer.h"

namespace evald::kernels {

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
    t.index_.emplace(t.tokens_[i], static_cast<int>(i));
    t.pieces_[i] = SentencePieceTokenBytes(t.tokens_[i], t.types_[i]);
  }
  t.byte_tokens_ = ByteTokenIds(
      [&](const std::string& name) {
        auto it = t.index_.find(name);
        return it == t.index_.end() ? -1 : it->second;
      },
      -1);
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
      text += kSentencePieceSpace;
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
