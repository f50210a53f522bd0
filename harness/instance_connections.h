// The port connections of one module instance in a testbench, read from its text:
// `M inst (.a(x), .b, .*)` or positional `M inst (x, y)`. The hardening uses it to find the
// reference's and the design's instances and to check that both are driven by the same inputs
// (their isolation wrappers then share one copy of each input, design_isolation.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/module_interface.h"

namespace evald {

struct ModuleInstance {
  std::string instance;  // its name
  // port name -> the connected expression as its tokens' texts joined by single blanks;
  // "" for a port left unconnected (`.p()`)
  std::map<std::string, std::string> connections;
};

// The single instance of `module` in `text`, its connections resolved against `ports` (`.*`
// and implicit `.name` connect the net of the same name; positional ones follow the port order).
// Fails when `module` is instantiated other than exactly once or the connections cannot be read.
StatusOr<ModuleInstance> FindSingleInstance(std::string_view text, std::string_view module,
                                            const ModuleInterface& ports);

}  // namespace evald
