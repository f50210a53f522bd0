// Tokens to a syntax tree, by @huggingface/jinja's grammar (the same precedence, the same
// statements). Constructs outside evald's subset - {% call %} blocks and macros that use
// caller, varargs or kwargs - are refused by name rather than half supported.
#pragma once

#include <vector>

#include "base/status.h"
#include "kernels/chat/jinja/jinja_ast.h"
#include "kernels/chat/jinja/jinja_lexer.h"

namespace evald::kernels::jinja {

// The template's top-level statements. `max_depth` bounds the nesting of blocks and
// expressions (the parser recurses on both).
StatusOr<NodeList> Parse(const std::vector<Token>& tokens, int max_depth);

}  // namespace evald::kernels::jinja
