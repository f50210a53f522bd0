// Static checks on a design before it is graded: a design may only be itself. It must not
// name the reference model, reach into the testbench by hierarchical name, pull in host files,
// carry native code, call a system task or function outside the allow-list (system_names.h),
// or take over nets procedurally (force, release, deassign, procedural assign).
// A violation makes the sample fail with category I, whatever the simulation says; the
// sandbox still contains what the design would have done.
//
// As written, the design must also read the same whether or not the bytes Verilator drops are
// dropped (dropped_bytes.h): a design may not mean one thing to one simulator and another to the
// other and to this check.
//
// A design is checked twice: as written (CheckDesignIntegrity), and as it is compiled
// (CheckCompiledDesign): the simulator's own preprocessor output with evald's comment removal
// applied. The compiled text must not be preprocessed again by anything: after the expansion no
// backtick may remain but those of a few inert directives (`timescale, `default_nettype,
// `resetall, `celldefine, `endcelldefine), each alone on its line in its plain form.
#pragma once

#include <string>
#include <string_view>

namespace evald {

struct IntegrityFinding {
  bool violation = false;
  std::string reason;  // first violation, with its line
};

IntegrityFinding CheckDesignIntegrity(std::string_view design);

IntegrityFinding CheckCompiledDesign(std::string_view compiled);

// The directives that may remain in a compiled design (without their backtick).
bool InertDirective(std::string_view name);

}  // namespace evald
