// Static checks on a design before it is graded: a design may only be itself. It must not
// name the reference model, reach into the testbench by hierarchical name, pull in host files,
// or carry native code (Verilator runs $system, $c, DPI imports and `systemc_ blocks).
// A violation makes the sample fail with category I, whatever the simulation says; the
// sandbox still contains what the design would have done.
#pragma once

#include <string>
#include <string_view>

namespace evald {

struct IntegrityFinding {
  bool violation = false;
  std::string reason;  // first violation, with its line
};

IntegrityFinding CheckDesignIntegrity(std::string_view design);

}  // namespace evald
