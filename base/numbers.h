// Numbers parsed from untrusted text (command lines, query strings, gate specifications) without
// exceptions: the whole text must be the number, in range, or the answer is nullopt.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace evald {

// Decimal digits with an optional leading '-', within [min, max].
std::optional<int64_t> ParseInt(std::string_view text, int64_t min, int64_t max);

// A finite decimal number ("0.5", ".5", "1", "1e-3").
std::optional<double> ParseDouble(std::string_view text);

}  // namespace evald
