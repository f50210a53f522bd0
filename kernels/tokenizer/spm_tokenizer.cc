#include "kernels/tokenizer/spm_tokenizer.h"

#include <cstdio>
#include <queue>

namespace evald::kernels {

namespace {

constexpr std::string_view kSpace = "\xe2\x96\x81";  // U+2581, SentencePiece's visible space

size_t Utf8Length(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c >> 5) == 6) return 2;
  if ((c >> 4) == 14) return 3;
  if ((c >> 3) == 30) return 4;
  return 1;  // invalid lead byte: a character of its own
}

struct Symbol {
  int prev, next;
  size_t start, len;
};

struct Bigram {
  int left, right;
  float score;
  size_t len;
  bool operator<(const Bigram& o) const {  // max-heap: higher score, then leftmost
    return score < o.score || (score == o.score && left > o.left);
  }
};

}  // namespace

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
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    auto it = t.index_.find(name);
    t.byte_tokens_[b] = it == t.index_.end() ? t.unk_ : it->second;
  }
  return t;
}

std::vector<int> SpmTokenizer::Encode(std::string_view raw, bool add_bos) const {
  std::vector<int> out;
  if (add_bos) out.push_back(bos_);
  if (raw.empty()) return out;
  std::string text;
  if (add_space_prefix_) text += kSpace;
  for (char c : raw) {
    if (c == ' ') {
      text += kSpace;
    } else {
      text += c;
    }
  }
  std::vector<Symbol> symbols;
  for (size_t pos = 0; pos < text.size();) {
    size_t len = std::min(Utf8Length(static_cast<unsigned char>(text[pos])), text.size() - pos);
    int idx = static_cast<int>(symbols.size());
    symbols.push_back({idx - 1, idx + 1, pos, len});
    pos += len;
  }
  symbols.back().next = -1;
  std::priority_queue<Bigram> queue;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    std::string_view piece(text.data() + symbols[left].start,
                           symbols[left].len + symbols[right].len);
    auto it = index_.find(piece);
    if (it == index_.end()) return;
    queue.push({left, right, scores_[static_cast<size_t>(it->second)], piece.size()});
  };
  for (size_t i = 1; i < symbols.size(); ++i) try_add(static_cast<int>(i - 1), static_cast<int>(i));
  while (!queue.empty()) {
    Bigram b = queue.top();
    queue.pop();
    Symbol& l = symbols[static_cast<size_t>(b.left)];
    Symbol& r = symbols[static_cast<size_t>(b.right)];
    if (l.len == 0 || r.len == 0 || l.len + r.len != b.len) continue;  // stale
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<size_t>(r.next)].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
  for (int i = 0; i >= 0 && i < static_cast<int>(symbols.size());
       i = symbols[static_cast<size_t>(i)].next) {
    const Symbol& s = symbols[static_cast<size_t>(i)];
    std::string_view piece(text.data() + s.start, s.len);
    auto it = index_.find(piece);
    if (it != index_.end()) {
      out.push_back(it->second);
    } else {
      for (unsigned char c : piece) out.push_back(byte_tokens_[c]);
    }
  }
  return out;
}

std::string SpmTokenizer::Piece(int token) const {
  if (token < 0 || token >= vocab_size()) return "";
  const std::string& t = tokens_[static_cast<size_t>(token)];
  switch (types_[static_cast<size_t>(token)]) {
    case TokenType::kByte: {
      unsigned v = 0;
      if (t.size() == 6 && std::sscanf(t.c_str(), "<0x%02X>", &v) == 1)
        return std::string(1, static_cast<char>(v));
      return "";
    }
    case TokenType::kControl:
    case TokenType::kUnused:
      return "";
    default: {
      std::string out;
      for (size_t i = 0; i < t.size();) {
        if (t.compare(i, kSpace.size(), kSpace) == 0) {
          out += ' ';
          i += kSpace.size();
        } else {
          out += t[i++];
        }
      }
      return out;
    }
  }
}

}  // namespace evald::kernels
