// The input constraints a benchmark's problem texts state, as reviewed data shipped with evald
// (datasets/assumptions/<benchmark>.json, compiled in): "it does not matter what your circuit
// does if both control inputs are 1" becomes `!(shift_ena && count_ena)`, assumed by formal
// checks at every step, so that a design differing from the reference only where the problem's
// own text allows it is not called wrong. An entry holds only where its problem's text contains
// the sentence it quotes: a benchmark whose text says otherwise gets no assumption from it.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "datasets/input_assumptions.pb.h"

namespace evald {

struct Problem;

// verilog-eval v2's reviewed entries (datasets/assumptions/verilog-eval-v2.json).
const datasets::InputAssumptions& VerilogEvalAssumptions();

// Reads a file of entries (protobuf's JSON mapping; unknown keys refused). Every entry needs a
// problem, a quote and an expression.
StatusOr<datasets::InputAssumptions> ParseInputAssumptions(const std::string& json);

// True when `prompt` holds `quote`, runs of blanks and line breaks in either read as one blank.
bool PromptQuotes(const std::string& prompt, const std::string& quote);

// Adds to each problem the expressions of the entries that name it and whose quote its prompt
// holds.
void ApplyInputAssumptions(const datasets::InputAssumptions& entries,
                           std::vector<Problem>* problems);

}  // namespace evald
