// The reserved words of SystemVerilog (IEEE 1800-2017 Annex B, which includes every Verilog
// keyword): what a renaming of user names must leave alone.
#pragma once

#include <string_view>

namespace evald {

bool IsVerilogKeyword(std::string_view word);

}  // namespace evald
