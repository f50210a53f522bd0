// The first step of rendering a chat template: its text as tokens, after the block trimming
// chat templates are rendered with (lstrip_blocks, trim_blocks, one trailing newline dropped,
// {% generation %} markers removed), exactly as @huggingface/jinja tokenizes it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace evald::kernels::jinja {

enum class TokenType {
  kText,
  kNumericLiteral,
  kStringLiteral,
  kIdentifier,
  kEquals,
  kOpenParen,
  kCloseParen,
  kOpenStatement,
  kCloseStatement,
  kOpenExpression,
  kCloseExpression,
  kOpenSquareBracket,
  kCloseSquareBracket,
  kOpenCurlyBracket,
  kCloseCurlyBracket,
  kComma,
  kDot,
  kColon,
  kPipe,
  kAdditiveOperator,        // + - ~
  kMultiplicativeOperator,  // * / // %
  kExponentiationOperator,  // **
  kComparisonOperator,      // < > <= >= == !=
  kUnaryOperator,           // a sign not followed by a number
  kComment,
};

struct Token {
  TokenType type;
  std::string value;
};

// The template text after the trimming options (exposed for tests).
std::string PreprocessTemplate(std::string_view text);

// Tokens of `text`; InvalidArgument naming the problem for text the reference also refuses
// (an unterminated string or tag, a bad escape, a character outside the grammar). At most
// `max_tokens` tokens.
StatusOr<std::vector<Token>> Tokenize(std::string_view text, size_t max_tokens);

}  // namespace evald::kernels::jinja
