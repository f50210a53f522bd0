// Integer constant expressions of Verilog, as port ranges and parameters are written, evaluated
// over the lexer's tokens: numbers in every base and size, parameters by name, the arithmetic,
// shift, comparison, logical and bitwise operators, ?: and $clog2. Anything else (a function
// call, a hierarchical name, x or z digits, an overflow) makes the value unknown instead of a
// guess. Evaluation is bounded: nesting and parameter chains deeper than kMaxConstantDepth are
// unknown too, so a hostile design cannot recurse without end.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/verilog_lexer.h"

namespace evald {

inline constexpr int kMaxConstantDepth = 64;

// A half-open range of tokens [begin, end).
struct TokenRange {
  size_t begin = 0, end = 0;
};

class ConstantScope {
 public:
  explicit ConstantScope(const std::vector<VerilogToken>& tokens) : tokens_(tokens) {}

  // A later definition of the same name replaces an earlier one (a body parameter after a
  // header default, as the language does when the header's is a default).
  void Define(std::string_view name, TokenRange expression);
  bool Defines(std::string_view name) const { return names_.count(std::string(name)) > 0; }

  std::optional<int64_t> Evaluate(TokenRange expression) const;

 private:
  std::optional<int64_t> Evaluate(TokenRange expression, int depth) const;
  friend class ConstantParser;

  std::optional<int64_t> Lookup(std::string_view name, int depth) const;

  const std::vector<VerilogToken>& tokens_;
  std::map<std::string, TokenRange, std::less<>> names_;
  // Each name is evaluated once (a chain of parameters each used twice by the next would
  // otherwise cost 2^depth evaluations); a name met again while it is being evaluated is a cycle.
  mutable std::map<std::string, std::optional<int64_t>, std::less<>> values_;
};

// The value of one number literal spread over tokens [i, ...): "8'd255", "'h1F", "4'b1010",
// "8'h FF", "123". Sets *next to the first token after it.
std::optional<int64_t> ParseNumberLiteral(const std::vector<VerilogToken>& tokens, size_t i,
                                          size_t end, size_t* next);

}  // namespace evald
