#include "kernels/tokenizer/spm_tokenizer.h"

#include <cstdio>

namespace evald::kernels {

StatusOr<SpmTokenizer> SpmTokenizer::FromGguf(const GgufFile& f) {
  auto model = f.GetString("tokenizer.ggml.model");
  if (!model) return Status::Corruption("tokenizer.ggml.model is missing");
  if (*model != "llama")
    return Status::InvalidArgument("tokenizer '" + *model +
                                   "' is not supported yet (llama/SentencePiece is)");
  auto vocab = GgufVocabulary::Read(f, /*bos=*/1, /*eos=*/2, /*add_bos=*/true);
  if (!vocab.ok()) return vocab.status();
  SpmTokenizer t;
  const size_t n = vocab->tokens.size();
  t.tokens_ = std::move(vocab->tokens);
  t.scores_ = std::move(vocab->scores);
  t.types_ = std::move(vocab->types);
  t.bos_ = vocab->bos;
  t.eos_ = vocab->eos;
  t.unk_ = vocab->unk >= 0 ? vocab->unk : 0;
  t.add_bos_ = vocab->add_bos;
  if (auto v = f.GetInt("tokenizer.ggml.add_space_prefix")) t.add_space_prefix_ = *v != 0;
  for (size_t i = 0; i < n; ++i) t.index_.emplace(t.tokens_[i], static_cast<int>(i));
  t.byte_tokens_ = ByteTokenIds(
      [&](const std::string& name) {
        auto it = t.index_.find(name);
        return it == t.index_.end() ? -1 : it->second;
      },
      t.unk_);
  t.IndexSpecialTokens(t.tokens_, t.types_);
  return t;
}

void SpmTokenizer::EncodeText(std::string_view raw, bool after_special,
                              std::vector<int>* out) const {
  if (raw.empty()) return;
  std::string text;
  if (add_space_prefix_ && after_special) text += kSentencePieceSpace;
  for (char c : raw) {
    if (c == ' ') {
      text += kSentencePieceSpace;
    } else {
      text += c;
    }
  }
  // Pairs merge when the vocabulary has their concatenation, highest score first.
  auto priority = [&](std::string_view l, std::string_view r) -> std::optional<double> {
    std::string joined;
    joined.reserve(l.size() + r.size());
    joined.append(l).append(r);
    auto it = index_.find(joined);
    if (it == index_.end()) return std::nullopt;
    return -static_cast<double>(scores_[static_cast<size_t>(it->second)]);
  };
  for (std::string_view piece : MergeByPriority(text, priority)) {
    auto it = index_.find(piece);
    if (it != index_.end()) {
      out->push_back(it->second);
    } else {
      for (unsigned char c : piece) out->push_back(byte_tokens_[c]);
    }
  }
}

std::string SpmTokenizer::Piece(int token) const {
  if (token < 0 || token >= vocab_size()) return "";
  return SentencePieceTokenBytes(tokens_[static_cast<size_t>(token)],
                                 types_[static_cast<size_t>(token)]);
}

}  // namespace evald::kernels
