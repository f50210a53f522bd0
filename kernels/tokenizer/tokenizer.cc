#include "kernels/tokenizer/tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <queue>

#include "kernels/tokenizer/bpe_tokenizer.h"
#include "kernels/tokenizer/spm_bpe_tokenizer.h"
#include "kernels/tokenizer/spm_tokenizer.h"

namespace evald::kernels {

size_t Utf8SequenceLength(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c >> 5) == 6) return 2;
  if ((c >> 4) == 14) return 3;
  if ((c >> 3) == 30) return 4;
  return 1;
}

namespace {

struct Symbol {
  int prev, next;
  size_t start, len;
};

struct Candidate {
  int left, right;
  double priority;
  size_t len;                                 // of the merged piece, to recognise stale entries
  bool operator<(const Candidate& o) const {  // std::priority_queue: smallest priority on top
    return priority > o.priority || (priority == o.priority && left > o.left);
  }
};

}  // namespace

std::vector<std::string_view> MergeByPriority(
    std::string_view text,
    const std::function<std::optional<double>(std::string_view, std::string_view)>& priority) {
  std::vector<Symbol> symbols;
  for (size_t pos = 0; pos < text.size();) {
    size_t len =
        std::min(Utf8SequenceLength(static_cast<unsigned char>(text[pos])), text.size() - pos);
    int idx = static_cast<int>(symbols.size());
    symbols.push_back({idx - 1, idx + 1, pos, len});
    pos += len;
  }
  if (symbols.empty()) return {};
  symbols.back().next = -1;
  auto piece = [&](const Symbol& s) { return text.substr(s.start, s.len); };
  std::priority_queue<Candidate> queue;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[static_cast<size_t>(left)];
    const Symbol& r = symbols[static_cast<size_t>(right)];
    if (auto p = priority(piece(l), piece(r))) queue.push({left, right, *p, l.len + r.len});
  };
  for (size_t i = 1; i < symbols.size(); ++i) try_add(static_cast<int>(i - 1), static_cast<int>(i));
  while (!queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    Symbol& l = symbols[static_cast<size_t>(c.left)];
    Symbol& r = symbols[static_cast<size_t>(c.right)];
    if (l.len == 0 || r.len == 0 || l.next != c.right || l.len + r.len != c.len) continue;  // stale
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<size_t>(r.next)].prev = c.left;
    try_add(l.prev, c.left);
    try_add(c.left, l.next);
  }
  std::vector<std::string_view> out;
  for (int i = 0; i >= 0; i = symbols[static_cast<size_t>(i)].next)
    out.push_back(piece(symbols[static_cast<size_t>(i)]));
  return out;
}

std::string UnescapeSentencePieceSpaces(std::string_view t) {
  std::string out;
  for (size_t i = 0; i < t.size();) {
    if (t.compare(i, kSentencePieceSpace.size(), kSentencePieceSpace) == 0) {
      out += ' ';
      i += kSentencePieceSpace.size();
    } else {
      out += t[i++];
    }
  }
  return out;
}

std::string SentencePieceTokenBytes(const std::string& token, TokenType type) {
  switch (type) {
    case TokenType::kByte: {
      unsigned v = 0;
      if (token.size() == 6 && std::sscanf(token.c_str(), "<0x%02X>", &v) == 1)
        return std::string(1, static_cast<char>(v));
      return "";
    }
    case TokenType::kControl:
    case TokenType::kUnused:
      return "";
    default:
      return UnescapeSentencePieceSpaces(token);
  }
}

std::array<int, 256> ByteTokenIds(const std::function<int(const std::string&)>& find, int missing) {
  std::array<int, 256> ids;
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    const int id = find(name);
    ids[static_cast<size_t>(b)] = id >= 0 ? id : missing;
  }
  return ids;
}

std::vector<int> Tokenizer::Encode(std::string_view text, bool add_bos) const {
  std::vector<int> out;
  if (add_bos && bos_ >= 0) out.push_back(bos_);
  EncodeText(text, true, &out);
  return out;
}

std::vector<int> Tokenizer::EncodeWithSpecialTokens(std::string_view text, bool add_bos) const {
  std::vector<int> out;
  if (add_bos && bos_ >= 0) out.push_back(bos_);
  size_t raw_start = 0;
  bool after_special = true;
  for (size_t pos = 0; pos < text.size();) {
    int token = -1;
    size_t length = 0;
    for (size_t len : special_lengths_[static_cast<unsigned char>(text[pos])]) {
      if (len > text.size() - pos) continue;
      auto it = specials_.find(text.substr(pos, len));
      if (it == specials_.end()) continue;
      token = it->second;
      length = len;
      break;
    }
    if (token < 0) {
      ++pos;
      continue;
    }
    if (pos > raw_start) EncodeText(text.substr(raw_start, pos - raw_start), after_special, &out);
    out.push_back(token);
    after_special = true;
    pos += length;
    raw_start = pos;
  }
  if (raw_start < text.size()) EncodeText(text.substr(raw_start), after_special, &out);
  return out;
}

int Tokenizer::SpecialToken(std::string_view text) const {
  auto it = specials_.find(text);
  return it == specials_.end() ? -1 : it->second;
}

void Tokenizer::IndexSpecialTokens(const std::vector<std::string>& tokens,
                                   const std::vector<TokenType>& types) {
  if (bos_ >= 0 && static_cast<size_t>(bos_) < tokens.size()) bos_text_ = tokens[bos_];
  for (size_t i = 0; i < tokens.size() && i < types.size(); ++i) {
    TokenType t = types[i];
    if (tokens[i].empty() ||
        (t != TokenType::kControl && t != TokenType::kUserDefined && t != TokenType::kUnknown))
      continue;
    if (!specials_.emplace(tokens[i], static_cast<int>(i)).second) continue;  // first id wins
    auto& lengths = special_lengths_[static_cast<unsigned char>(tokens[i][0])];
    if (std::find(lengths.begin(), lengths.end(), tokens[i].size()) == lengths.end()) {
      lengths.push_back(tokens[i].size());
      std::sort(lengths.rbegin(), lengths.rend());
    }
  }
}

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
  if (*model == "gemma4") {
    auto t = SpmBpeTokenizer::FromGguf(file);
    if (!t.ok()) return t.status();
    return std::unique_ptr<Tokenizer>(new SpmBpeTokenizer(std::move(*t)));
  }
  return Status::InvalidArgument(
      "tokenizer '" + *model +
      "' is not supported (llama/SentencePiece, gpt2/BPE and gemma4/SentencePiece-style BPE are)");
}

}  // namespace evald::kernels
