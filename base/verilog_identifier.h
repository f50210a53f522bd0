// Whole identifiers in Verilog text, told apart by the characters a simple identifier is made
// of (letters, digits, _ and $). Not a lexer: a name inside a comment or a string counts too,
// which is what the callers want - they rename a module everywhere in a file they then
// compile, or look for a name a testbench mentions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace evald {

bool IsIdentifierChar(char c);

// The identifier at the start of `text` ("" when none starts there).
std::string_view LeadingIdentifier(std::string_view text);

// True when `name` occurs in `text` with no identifier character on either side.
bool MentionsIdentifier(std::string_view text, std::string_view name);

// Every whole occurrence of `name` replaced by `to`, in one pass; `renamed` (optional) counts
// them. An empty name renames nothing.
std::string RenameIdentifier(std::string_view text, std::string_view name, std::string_view to,
                             int* renamed = nullptr);

}  // namespace evald
