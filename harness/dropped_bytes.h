// Bytes Verilator's reader drops before it reads a source file, measured on Debian 12's
// Verilator 5.006 (`verilator -E -P` over each byte 0x01-0xff in code, strings, comments and
// escaped names): every carriage return, wherever it stands; and ^Z (0x1a, the old DOS end of
// file) and each byte of the UTF-8 byte order mark (0xef, 0xbb, 0xbf) where they stand in code,
// outside strings, comments and escaped names. So "$dis<0xef>play" is $display to Verilator and
// a syntax error to Icarus, which drops none of them (and ends a line at a lone carriage return).
#pragma once

#include <string>
#include <string_view>

namespace evald {

// One of the bytes Verilator drops where they stand in code (not the carriage return).
bool VerilatorDropsInCode(char c);

// The text as Verilator's preprocessor writes it out (what evald then compiles): without its
// carriage returns, each comment blanked (line breaks kept), and the bytes it drops in code gone.
// A byte dropped in code still ended the token before it; only in the text written out do the
// tokens on either side touch, and a reader of that text (the compiler) reads them joined: "a",
// 0xef, "b" becomes "ab", and '/', 0xef, '*' opens a comment.
std::string AsVerilatorReads(std::string_view text);

}  // namespace evald
