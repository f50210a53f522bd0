// Filters (`| trim`, `| tojson(indent=2)`, `| selectattr('role', 'equalto', 'user')`), each as
// @huggingface/jinja applies it to each kind of value, refused by name where Python's Jinja2
// would give other bytes.
#pragma once

#include "kernels/chat/jinja/jinja_ast.h"
#include "kernels/chat/jinja/jinja_interpreter.h"
#include "kernels/chat/jinja/jinja_value.h"

namespace evald::kernels::jinja {

// `operand | filter` where `filter` is an identifier or a call node.
Value ApplyFilter(Interpreter& in, const Value& operand, const Node& filter, Environment* env);

}  // namespace evald::kernels::jinja
