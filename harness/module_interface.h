// A module's interface read from its text: its ports in header order, each with its direction
// and width, in both header styles (ANSI `module m(input [7:0] a, ...)` and the older
// `module m(a, ...); input [7:0] a;`). Widths come from the packed dimensions, the data type
// (int, byte, a typedef'd enum or vector ...) and the module's parameters, evaluated as
// constants; a width evald cannot evaluate is unknown rather than guessed.
//
// The grader compares a design's interface with the reference's before compiling it (a port
// that is extra, of the other direction or of another width is refused, naming the port), and
// builds the
// nets that isolate both from the testbench out of the reference's (design_isolation.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace evald {

struct PortDeclaration {
  enum class Direction { kInput, kOutput, kInout };
  std::string name;
  Direction direction = Direction::kInput;
  std::optional<int64_t> width;  // packed bits; unknown for real, string and unevaluated types
  bool is_signed = false;
  bool unpacked = false;  // the port has unpacked dimensions (an array)
  int line = 0;
};

std::string_view DirectionName(PortDeclaration::Direction d);

// A parameter of the module's header, `#(parameter NAME = VALUE, ...)`, in header order.
struct HeaderParameter {
  std::string name;
  std::string default_value;  // its expression as written
};

struct ModuleInterface {
  std::string module;
  std::vector<PortDeclaration> ports;
  std::vector<HeaderParameter> parameters;
  const PortDeclaration* Find(std::string_view name) const;
};

struct InterfaceReading {
  enum class Outcome { kFound, kNotFound, kDefinedTwice, kUnreadable };
  Outcome outcome = Outcome::kNotFound;
  ModuleInterface interface;
  std::string problem;  // kUnreadable: what could not be read, with its line
};

// `text` is lexed whole; bound it (kMaxLexedBytes) before calling.
InterfaceReading ReadModuleInterface(std::string_view text, std::string_view module);

// The first way `design`'s ports differ from `reference`'s ("port `in` is declared output; the
// reference's is input", "port `q` is 4 bits wide; the reference's is 8", "port `x` is not a
// port of the reference"), or "" when they agree. Widths are compared where both are known. A
// port the design lacks is not reported: the testbench connects every port of the reference by
// name, so compiling fails with the benchmark's own letter (`c`, `p`, `C`) and can never pass.
std::string InterfaceDifference(const ModuleInterface& reference, const ModuleInterface& design);

}  // namespace evald
