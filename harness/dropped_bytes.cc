#include "harness/dropped_bytes.h"

#include <vector>

#include "harness/verilog_lexer.h"

namespace evald {

bool VerilatorDropsInCode(char c) {
  switch (static_cast<unsigned char>(c)) {
    case 0x1a:
    case 0xbb:
    case 0xbf:
    case 0xef:
      return true;
    default:
      return false;
  }
}

std::string AsVerilatorReads(std::string_view text) {
  std::string without_cr;
  without_cr.reserve(text.size());
  for (char c : text)
    if (c != '\r') without_cr += c;
  // In code, such a byte is a punctuation token of its own to the lexer (it is no part of a name,
  // a number or white space); in a string, a comment or an escaped name it is inside that token.
  enum class Fate : char { kKeep, kDrop, kBlank };
  std::vector<Fate> fate(without_cr.size(), Fate::kKeep);
  for (const auto& t : TokenizeVerilog(without_cr, /*keep_comments=*/true)) {
    const size_t at = static_cast<size_t>(t.text.data() - without_cr.data());
    for (size_t k = 0; k < t.text.size(); ++k) {
      if (t.kind == VerilogToken::Kind::kComment && t.text[k] != '\n')
        fate[at + k] = Fate::kBlank;
      else if (t.kind == VerilogToken::Kind::kPunct && VerilatorDropsInCode(t.text[k]))
        fate[at + k] = Fate::kDrop;
    }
  }
  std::string read;
  read.reserve(without_cr.size());
  for (size_t i = 0; i < without_cr.size(); ++i)
    if (fate[i] != Fate::kDrop) read += fate[i] == Fate::kBlank ? ' ' : without_cr[i];
  return read;
}

}  // namespace evald
