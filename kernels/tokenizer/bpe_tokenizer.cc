#include "kernels/tokenizer/bpe_tokenizer.h"

namespace evald::kernels {

namespace {

std::string Utf8Of(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

// bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 bytes for
// U+0100 onwards in byte order.
const std::array<std::string, 256>& StandIns() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
      t[static_cast<size_t>(b)] = Utf8Of(printable ? static_cast<uint32_t>(b) : next++);
    }
    return t;
  }();
  return table;
}

}  // namespace

const std::string& ByteStandIn(uint8_t byte) {
  return StandIns()[byte];
}

StatusOr<BpeTokenizer> BpeTokenizer::FromGguf(const GgufFile& f) {
  auto vocab = GgufVocabulary::Read(f, -1, -1, /*add_bos=*/false);
  if (!vocab.ok()) return vocab.status();
  BpeTokenizer t;
  t.tokens_ = std::move(vocab->tokens);
  t.types_ = std::move(vocab->types);
  t.bos_ = vocab->bos;
  t.eos_ = vocab->eos;
  t.add_bos_ = vocab->add_bos;
  auto pre = PreTokenizer::ForName(f.GetString("tokenizer.ggml.pre").value_or("default"));
  if (!pre.ok()) return pre.status();
  t.pre_ = std::move(*pre);

  // Stand-in character -> byte, to turn token strings back into bytes.
  std::map<std::string, uint8_t, std::less<>> byte_of;
  for (int b = 0; b < 256; ++b)
    byte_of[ByteStandIn(static_cast<uint8_t>(b))] = static_cast<uint8_t>(b);
  const size_t n = t.tokens_.size();
  t.pieces_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const std::string& s = t.tokens_[i];
    t.index_.emplace(s, static_cast<int>(i));
    if (t.types_[i] == TokenType::kControl || t.types_[i] == TokenType::kUnused) continue;
    if (t.types_[i] == TokenType::kUserDefined) {  // written as plain text
      t.pieces_[i] = s;
      continue;
    }
    std::string bytes;
    for (size_t k = 0; k < s.size();) {
      size_t len = std::min(Utf8SequenceLength(static_cast<unsigned char>(s[k])), s.size() - k);
      auto it = byte_of.find(std::string_view(s).substr(k, len));
      if (it != byte_of.end()) {
        bytes += static_cast<char>(it->second);
      } else {
        bytes.append(s, k, len);  // not a stand-in: keep the character itself
      }
      k += len;
    }
    t.pieces_[i] = std::move(bytes);
  }

  auto ranks = ReadMergeRanks(f);
  if (!ranks.ok()) return ranks.status();
  t.ranks_ = std::move(*ranks);
  t.IndexSpecialTokens(t.tokens_, t.types_);
  return t;
}

StatusOr<MergeRanks> ReadMergeRanks(const GgufFile& f) {
  const GgufValue* merges = f.Find("tokenizer.ggml.merges");
  if (!merges || merges->type != GgufType::kArray || merges->array_type != GgufType::kString)
    return Status::Corruption("tokenizer.ggml.merges is missing or not a string array");
  MergeRanks ranks;
  int rank = 0;
  for (const auto& m : merges->array) {
    // The first character may be several bytes (a UTF-8 character): look past all of it.
    const size_t first = m.s.empty() ? 1 : Utf8SequenceLength(static_cast<unsigned char>(m.s[0]));
    size_t space = m.s.find(' ', std::min(first, m.s.size()));
    if (space == std::string::npos || space + 1 >= m.s.size())
      return Status::Corruption("malformed merge '" + m.s.substr(0, 64) + "' at rank " +
                                std::to_string(rank));
    ranks.emplace(std::make_pair(m.s.substr(0, space), m.s.substr(space + 1)), rank++);
  }
  return ranks;
}

std::vector<std::string_view> MergeByRank(std::string_view text, const MergeRanks& ranks) {
  auto priority = [&](std::string_view l, std::string_view r) -> std::optional<double> {
    auto it = ranks.find(std::make_pair(std::string(l), std::string(r)));
    if (it == ranks.end()) return std::nullopt;
    return it->second;
  };
  return MergeByPriority(text, priority);
}

void BpeTokenizer::EncodePiece(std::string_view piece, std::vector<int>* out) const {
  std::string text;  // the piece's bytes as stand-in characters
  for (unsigned char c : piece) text += ByteStandIn(c);
  if (pre_->ignore_merges()) {
    auto it = index_.find(text);
    if (it != index_.end()) {
      out->push_back(it->second);
      return;
    }
  }
  for (std::string_view symbol : MergeByRank(text, ranks_)) {
    auto it = index_.find(std::string(symbol));
    if (it != index_.end()) {
      out->push_back(it->second);
      continue;
    }
    // No token for the merged symbol: its characters (bytes) one by one.
    for (size_t k = 0; k < symbol.size();) {
      size_t len =
          std::min(Utf8SequenceLength(static_cast<unsigned char>(symbol[k])), symbol.size() - k);
      auto byte = index_.find(std::string(symbol.substr(k, len)));
      if (byte != index_.end()) out->push_back(byte->second);
      k += len;
    }
  }
}

void BpeTokenizer::EncodeText(std::string_view text, bool, std::vector<int>* out) const {
  for (std::string_view piece : pre_->Split(text)) EncodePiece(piece, out);
}

std::string BpeTokenizer::Piece(int token) const {
  if (token < 0 || token >= vocab_size()) return "";
  return pieces_[static_cast<size_t>(token)];
}

}  // namespace evald::kernels
