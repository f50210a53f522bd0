#include "harness/design_isolation.h"

namespace evald {

namespace {

std::string Range(int64_t width) {
  return width > 1 ? " [" + std::to_string(width - 1) + ":0]" : "";
}

}  // namespace

StatusOr<std::string> IsolationWrapper(const ModuleInterface& interface, const IsolationNames& n) {
  using Direction = PortDeclaration::Direction;
  std::string ports, body, connections;
  for (const auto& p : interface.ports) {
    if (p.direction == Direction::kInout)
      return Status::InvalidArgument("port " + p.name + " is inout: it cannot be isolated");
    if (p.unpacked) return Status::InvalidArgument("port " + p.name + " is an array");
    if (!p.width) return Status::InvalidArgument("the width of port " + p.name + " is unknown");
    const bool input = p.direction == Direction::kInput;
    const std::string copy = "c_" + n.nonce + "_" + p.name, range = Range(*p.width);
    const std::string shared = "s_" + n.nonce + "_" + p.name;
    ports += std::string(ports.empty() ? "\n" : ",\n") + "  " + (input ? "input" : "output") +
             " wire" + range + " " + p.name;
    body += "  wire" + range + " " + copy + ";\n";
    if (!input) {
      body += "  assign " + p.name + " = " + copy + ";\n";
    } else if (n.shared_inputs_from.empty()) {
      body += "  wire" + range + " " + shared + ";\n  assign " + shared + " = " + p.name +
              ";\n  assign " + copy + " = " + shared + ";\n";
    } else {
      body += "  assign " + copy + " = " + n.shared_inputs_from + "." + shared + ";\n";
    }
    connections += std::string(connections.empty() ? "" : ", ") + "." + p.name + "(" + copy + ")";
  }
  std::string declared, forwarded;
  if (!n.forwarded_parameters.empty()) {
    for (const auto& p : interface.parameters)
      declared += std::string(declared.empty() ? " #(" : ", ") + "parameter " + p.name + " = " +
                  p.default_value;
    declared += ")";
    for (const auto& name : n.forwarded_parameters)
      forwarded += std::string(forwarded.empty() ? " #(" : ", ") + "." + name + "(" + name + ")";
    forwarded += ")";
  }
  return "module " + n.wrapper + declared + " (" + ports + (ports.empty() ? "" : "\n") + ");\n" +
         body + "  " + n.inner + forwarded + " " + n.instance + " (" + connections +
         ");\nendmodule\n";
}

}  // namespace evald
