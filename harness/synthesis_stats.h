// "Is it reasonable hardware?": Yosys synthesis of a design to a generic gate library, in the
// sandbox - cell count, an area estimate and the logic depth - so that a passing design can be
// set beside the reference.
//
// The library is Yosys's internal one after `synth -noabc; abc -g AND,NAND,OR,NOR,XOR,XNOR,
// ANDNOT,ORNOT,MUX`: two-input gates, inverters, 2:1 multiplexers and flip-flops. Area is in
// NAND2 gate equivalents with the weights of typical standard-cell libraries (GateEquivalents);
// depth is Yosys's `ltp -noff`, the longest path of gates between flip-flops and ports.
#pragma once

#include <map>
#include <string>

#include "sandbox/sandbox_protocol.pb.h"

namespace evald {

struct SynthStats {
  bool ok = false;
  int cells = 0;
  double area = 0;  // NAND2 gate equivalents
  int depth = 0;    // gates on the longest combinational path
  int flip_flops = 0;
  std::map<std::string, int> by_type;  // "$_AND_" -> count
  std::string problem;                 // why not ok
  bool cacheable = true;  // false: the wall clock or the sandbox ended it, not the design
};

// The weight of one cell type in NAND2 equivalents (0 for a type the table does not know,
// which is then reported in `problem`).
double GateEquivalents(const std::string& cell_type);

// Synthesises module `top` of `design` (the preprocessed text that was compiled).
sandbox::JobRequest BuildSynthesisJob(const std::string& design, const std::string& top,
                                      const std::string& nonce, uint32_t cpu_seconds);

// Reads what `stat` and `ltp` wrote (files Yosys wrote itself, never its log).
SynthStats ParseSynthesisResponse(const sandbox::JobResponse& response);

// Parsers for the two reports, linear in the text.
void ParseStat(std::string_view text, SynthStats* stats);
int ParseLongestPath(std::string_view text);

}  // namespace evald
