// A small Verilog/SystemVerilog tokenizer: enough to look at a design's identifiers, system
// tasks, directives and strings without being fooled by comments, strings or escaped names.
// It never fails; unknown bytes become punctuation tokens.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace evald {

struct VerilogToken {
  enum class Kind { kIdentifier, kSystemName, kDirective, kString, kNumber, kPunct };
  Kind kind;
  std::string text;  // identifiers: escaped ones without the backslash; strings: unquoted body
  int line;
};

std::vector<VerilogToken> TokenizeVerilog(std::string_view source);

}  // namespace evald
