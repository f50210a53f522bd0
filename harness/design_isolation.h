// The nets a design touches are its own. A simulator connects an instance's ports to the nets of
// its parent directly (Icarus even merges them into one net), so a design that forces its input
// port, drives it as an output, or puts a switch or a stronger driver on it would change the
// testbench's stimulus net itself - which the reference reads too. The testbench therefore
// instantiates a wrapper instead of the design: the wrapper has the reference's ports and copies
// each input onto a net of its own with a continuous assignment (one-way: nothing done to the
// copy reaches the original), connects the design to the copies, and copies each of the
// design's outputs back the same way.
//
// Timing: a copy is one more scheduling step, so whether a module samples an input the stimulus
// writes at the same clock edge (a race many testbenches have) depends on the order the
// simulator updates the copies in. Both modules must see the same order: the reference's
// wrapper keeps one shared copy of each input, and both its own copy and the design wrapper's
// copy are taken from that one (by hierarchical name, through the testbench), so the two are
// updated together. Outputs are copied once on each side, so the testbench compares both after
// the same number of steps. (Measured on verilog-eval: with a copy per wrapper from the
// testbench's net, two references stop matching themselves, Prob066 and Prob139.)
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "harness/module_interface.h"

namespace evald {

struct IsolationNames {
  std::string wrapper;   // the module the testbench instantiates
  std::string inner;     // the module it wraps (TopModule, or the renamed reference)
  std::string instance;  // the wrapped instance's name
  std::string nonce;     // in the names of the copies (s_<nonce>_<port>, c_<nonce>_<port>)
  // Empty: this wrapper keeps the shared copies (the reference's). Else the hierarchical name
  // of the wrapper instance that keeps them (the design's wrapper reads them from there).
  std::string shared_inputs_from;
  // Header parameters the testbench sets on its instance: the wrapper declares every header
  // parameter of the interface (with its default) and hands these on to the inner module, so
  // the design is built as the testbench asks. (The wrapper's own port widths are those of the
  // interface's defaults: calibration shows whether the testbench's values agree with them.)
  std::vector<std::string> forwarded_parameters;
};

// The wrapper module's text. Fails for an interface it cannot isolate: a port of unknown width,
// an array port, an inout port (no one-way copy exists for a bidirectional net).
StatusOr<std::string> IsolationWrapper(const ModuleInterface& interface,
                                       const IsolationNames& names);

}  // namespace evald
