// Per-run hardening of a verilog-eval testbench so that what decides the verdict is out of the
// design's reach (docs/verdicts.md, "Hardening"):
//  - Names: every name of the testbench and the reference gets the run's nonce as a suffix
//    (judge_renaming.h), so no upward hierarchical name and no declaration of the design's can
//    reach or capture one.
//  - Nets: the testbench instantiates isolation wrappers (design_isolation.h) for the design
//    and for the reference, so nothing the design does to its ports reaches the stimulus.
//  - The result: the testbench prints its "Mismatches: N in M samples" and TIMEOUT lines to
//    standard error, tagged with a secret it reads from its command line (+evald_tag=...) when
//    it starts. The secret is in neither source nor binary; the design can print only to
//    standard output and may not read the command line; the simulation step sees no /proc.
//  - Directives: the testbench starts from `resetall and the judge's files are compiled under
//    `default_nettype none, so no directive of the design carries into them and no name of
//    theirs can fall through to an implicit net the design could capture.
// Only names, the output stream and printed text change, never what the testbench checks.
// Optionally (stop_at_first_mismatch) the testbench also calls $finish right after it counts its
// first mismatching sample; its final block still prints the result line.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "harness/module_interface.h"

namespace evald {

struct HardenedBench {
  bool stops_at_first_mismatch = false;  // asked for, and the testbench's counter was found
  std::string top;                       // the renamed top module (`tb_<nonce>`)
  std::string testbench;                 // rewritten NAME_test.sv
  std::string reference;                 // rewritten NAME_ref.sv with both isolation wrappers
  ModuleInterface interface;             // the reference's ports: what a design must match
  // Self-checking testbenches (self_checking_bench.h): the verdict is its tagged pass and
  // failure lines; `reference` holds the design's isolation wrapper alone.
  bool pass_lines = false;
  std::vector<std::string> pass_texts;  // what its pass lines say ("Your Design Passed")
  // Beside the simulation (the testbench reads them), and the unit of files without `timescale.
  std::map<std::string, std::string> data_files;
  std::string default_timescale;
};

// The ports of `module RefModule` in the reference, or Corruption saying why they cannot be read.
StatusOr<ModuleInterface> ReadReferenceInterface(const std::string& reference);

// The reference as the judge compiles it: renamed, followed by the wrappers of the reference
// (`evald_ref_<nonce>`, around `RefModule_<nonce>`) and of the design (`evald_dut_<nonce>`,
// around `TopModule`); `reference_instance` is the hierarchical name, from the design wrapper's
// scope, of the reference wrapper's instance (the design's copies of the inputs are taken from
// its shared ones). Fails when the reference's interface cannot be read or isolated.
struct JudgeReference {
  std::string text;
  ModuleInterface interface;
  std::string reference_wrapper, design_wrapper;  // module names
};
StatusOr<JudgeReference> PrepareJudgeReference(const std::string& reference,
                                               const std::string& nonce,
                                               const std::string& reference_instance);

// The length of a result tag's secret: 32 hex digits (128 bits).
inline constexpr size_t kResultSecretLength = 32;

// "[evald-<secret>]": what starts the testbench's result lines.
std::string ResultTag(const std::string& secret);
// The simulation's command-line argument that hands the secret to the testbench.
std::string ResultTagPlusarg(const std::string& secret);
// Declares the tag variable `evald_tag_<nonce>` in a module and reads it from the plusarg at
// time 0 (text to insert right after a module header).
std::string ResultTagDeclaration(const std::string& nonce);
// `$fdisplay` to standard error of "<tag> <format>" with the tag variable.
std::string TaggedDisplayCall(const std::string& nonce, const std::string& format);

// Each `$display("TEXT", ...)` of a testbench for which `label(TEXT)` gives a prefix becomes
// `$fdisplay(STDERR, "[evald-%0s] PREFIXTEXT", tag, ...)`: a tagged line on standard error.
std::string TagDisplays(const std::string& testbench, const std::string& nonce,
                        const std::function<std::optional<std::string>(std::string_view)>& label);

// Inserts `text` right after the header (the first ';' at depth 0) of module `module`.
StatusOr<std::string> InsertAfterHeader(const std::string& source, const std::string& module,
                                        const std::string& text);

// Fails (Corruption) when the testbench does not print a "Mismatches:" result line, which the
// grader needs, or has no module `tb`, or its reference's ports cannot be isolated.
StatusOr<HardenedBench> HardenTestbench(const std::string& testbench, const std::string& reference,
                                        const std::string& nonce,
                                        bool stop_at_first_mismatch = false);

// The reference rewritten as a design (module RefModule -> module TopModule), for calibration.
std::string ReferenceAsDesign(const std::string& reference);

}  // namespace evald
