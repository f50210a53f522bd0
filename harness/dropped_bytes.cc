#include "harness/dropped_bytes.h"

#include <algorithm>
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
  std::string without_cr(text);
  without_cr.erase(std::remove(without_cr.begin(), without_cr.end(), '\r'), without_cr.end());
  // Its comments blanked, as Verilator writes them out. In the code left, a byte it drops is a
  // punctuation token of its own to the lexer (no part of a name, a number or white space); in a
  // string or an escaped name it is inside that token and stays.
  const std::string code = StripComments(without_cr);
  std::vector<bool> drop(code.size(), false);
  for (const auto& t : TokenizeVerilog(code)) {
    if (t.kind != VerilogToken::Kind::kPunct) continue;
    const size_t at = static_cast<size_t>(t.text.data() - code.data());
    for (size_t k = 0; k < t.text.size(); ++k) drop[at + k] = VerilatorDropsInCode(t.text[k]);
  }
  std::string read;
  read.reserve(code.size());
  for (size_t i = 0; i < code.size(); ++i)
    if (!drop[i]) read += code[i];
  return read;
}

}  // namespace evald
