// Per-run hardening of a verilog-eval testbench so that a design cannot forge its verdict.
//  - Every scope a design could reach by an upward hierarchical name (tb, stim1, good1,
//    top_module1, stats1, stimulus_gen, RefModule) gets a random suffix the design cannot know
//    when it is compiled: `good1.out` or `stats1.errors = 0` no longer resolve.
//  - The testbench's result line and its TIMEOUT line carry a tag made from a second secret,
//    which appears in no name, file name or command line: nothing the design can observe while
//    it runs (%m, the instance path) shows it. The grader accepts exactly one tagged result line,
//    as the last line of the output, and treats any untagged "Mismatches:" line as forgery.
// The transformation changes names and printed text only, never what the testbench checks.
// Optionally (stop_at_first_mismatch) the testbench also calls $finish right after it counts its
// first mismatching sample; its final block still prints the result line.
#pragma once

#include <string>

#include "base/status.h"

namespace evald {

struct HardenedBench {
  bool stops_at_first_mismatch = false;  // asked for, and the testbench's counter was found
  std::string tag;                       // "[evald-<secret>]"
  std::string top;                       // the renamed top module (`tb_<nonce>`)
  std::string testbench;                 // rewritten NAME_test.sv
  std::string reference;                 // rewritten NAME_ref.sv
};

// Fails (Corruption) when the testbench does not print a "Mismatches:" result line, which the
// grader needs.
// `nonce` renames scopes and files (the design may learn it while running); `secret` makes the
// tag (it must not).
StatusOr<HardenedBench> HardenTestbench(const std::string& testbench, const std::string& reference,
                                        const std::string& nonce, const std::string& secret,
                                        bool stop_at_first_mismatch = false);

// Replaces every whole-identifier occurrence of `name` in Verilog text (identifiers: letters,
// digits, _ and $), in one pass.
std::string RenameIdentifier(const std::string& text, const std::string& name,
                             const std::string& to);

// The reference rewritten as a design (module RefModule -> module TopModule), for calibration.
std::string ReferenceAsDesign(const std::string& reference);

}  // namespace evald
