#include "kernels/tokenizer/tokenizer.h"

#include "kernels/tokenizer/bpe_tokenizer.h"
#include "kernels/tokenizer/spm_tokenizer.h"

namespace evald::kernels {

std::string Tokenizer::Decode(const std::vector<int>& tokens) const {
  std::string out;
  for (int t : tokens) out += Piece(t);
  return out;
}

StatusOr<GgufVocabulary> GgufVocabulary::Read(const GgufFile& f, int default_bos, int default_eos,
                                              bool default_add_bos) {
  const GgufValue* tokens = f.Find("tokenizer.ggml.tokens");
  if (!tokens || tokens->type != GgufType::kArray || tokens->array_type != GgufType::kString ||
      tokens->array.empty())
    return Status::Corruption("tokenizer.ggml.tokens is missing or not a string array");
  if (tokens->array.size() > (1u << 24)) return Status::Corruption("vocabulary too large");
  GgufVocabulary v;
  const size_t n = tokens->array.size();
  v.tokens.reserve(n);
  for (const auto& t : tokens->array) v.tokens.push_back(t.s);
  v.scores.assign(n, 0.0f);
  v.types.assign(n, TokenType::kNormal);
  if (const GgufValue* s = f.Find("tokenizer.ggml.scores")) {
    if (s->array.size() != n)
      return Status::Corruption("tokenizer.ggml.scores has the wrong length");
    for (size_t i = 0; i < n; ++i)
      v.scores[i] = static_cast<float>(s->array[i].AsFloat().value_or(0));
  }
  if (const GgufValue* ty = f.Find("tokenizer.ggml.token_type")) {
    if (ty->array.size() != n)
      return Status::Corruption("tokenizer.ggml.token_type has the wrong length");
    for (size_t i = 0; i < n; ++i) {
      int64_t t = ty->array[i].AsInt().value_or(1);
      v.types[i] = (t >= 1 && t <= 6) ? static_cast<TokenType>(t) : TokenType::kNormal;
    }
  }
  auto id = [&](const char* key, int fallback) {
    auto x = f.GetInt(key);
    if (x && *x >= 0 && static_cast<size_t>(*x) < n) return static_cast<int>(*x);
    return fallback >= 0 && static_cast<size_t>(fallback) < n ? fallback : -1;
  };
  v.bos = id("tokenizer.ggml.bos_token_id", default_bos);
  v.eos = id("tokenizer.ggml.eos_token_id", default_eos);
  v.unk = id("tokenizer.ggml.unknown_token_id", -1);
  v.add_bos = default_add_bos;
  if (auto x = f.GetInt("tokenizer.ggml.add_bos_token")) v.add_bos = *x != 0;
  if (v.add_bos && v.bos < 0) return Status::Corruption("add_bos_token without a BOS token");
  return v;
}

StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const GgufFile& file) {
  auto model = file.GetString("tokenizer.ggml.model");
  if (!model) return Status::Corruption("tokenizer.ggml.model is missing");
  if (*model == "llama") {
    auto t = SpmTokenizer::FromGguf(file);
    if (!t.ok()) return t.status();
    return std::unique_ptr<Tokenizer>(new SpmTokenizer(std::move(*t)));
  }
  if (*model == "gpt2") {
    auto t = BpeTokenizer::FromGguf(file);
    if (!t.ok()) return t.status();
    return std::unique_ptr<Tokenizer>(new BpeTokenizer(std::move(*t)));
  }
  return Status::InvalidArgument("tokenizer '" + *model +
                                 "' is not supported (llama/SentencePiece and gpt2/BPE are)");
}

}  // namespace evald::kernels
