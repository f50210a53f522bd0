// Systematic mutants of a reference design, for auditing a testbench: each mutant changes one
// place of the text (an operator, a constant, a width, a reset's polarity, a clock edge, a
// state transition's target), found through the lexer so that comments and strings are never
// touched. A mutant that no longer compiles, or that is equivalent to the reference, says
// nothing about the testbench; the audit finds those out by simulation and formal checks.
#pragma once

#include <string>
#include <vector>

namespace evald {

struct Mutant {
  std::string kind;         // "operator", "constant", "width", "reset-polarity", "edge",
                            // "negation", "transition"
  std::string description;  // "line 8: '+' -> '-'"
  std::string text;         // the whole mutated design
};

// Up to `per_kind` mutants of each kind, the first sites in text order, no two alike and none
// equal to `design`. Deterministic.
std::vector<Mutant> MutateDesign(const std::string& design, size_t per_kind = 4);

}  // namespace evald
