// The system tasks and functions a design may call: an allow-list. Everything the simulators
// offer beyond it (file I/O, the command line, ending or steering the simulation, host code,
// the VHDL textio and queue extensions of Icarus, Verilator's $c ...) is refused by name, so a
// task the list does not know can never be the way in. docs/verdicts.md lists the same table.
#pragma once

#include <string_view>
#include <vector>

namespace evald {

struct AllowedSystemName {
  std::string_view name;
  std::string_view group;  // what it is for, as docs/verdicts.md groups them
  // The call must name a seed variable of the design's own as its first argument
  // ($random(seed)): without one it draws from the random state the testbench's stimulus
  // draws from, and could steer the stimulus.
  bool needs_seed_variable = false;
};

const std::vector<AllowedSystemName>& AllowedSystemNames();

// The entry for `name` (with its '$'), or nullptr when the design may not call it.
const AllowedSystemName* FindAllowedSystemName(std::string_view name);

// Why a design may not call `name`: the reason for the groups the simulators document, else the
// allow-list's own words.
std::string_view RefusalReason(std::string_view name);

}  // namespace evald
