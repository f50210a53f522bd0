#include "harness/instance_connections.h"

#include "harness/verilog_lexer.h"

namespace evald {

namespace {

using Kind = VerilogToken::Kind;
using Tokens = std::vector<VerilogToken>;

bool IsPunct(const Tokens& t, size_t i, char c) {
  return i < t.size() && t[i].kind == Kind::kPunct && t[i].text[0] == c;
}

// Index after the bracket group opened at i.
size_t CloseGroup(const Tokens& t, size_t i) {
  int depth = 0;
  for (; i < t.size(); ++i) {
    if (IsPunct(t, i, '(') || IsPunct(t, i, '[') || IsPunct(t, i, '{')) ++depth;
    if ((IsPunct(t, i, ')') || IsPunct(t, i, ']') || IsPunct(t, i, '}')) && --depth == 0)
      return i + 1;
  }
  return t.size();
}

std::string Join(const Tokens& t, size_t begin, size_t end) {
  std::string s;
  for (size_t i = begin; i < end; ++i) {
    if (!s.empty()) s += ' ';
    s += t[i].text;
  }
  return s;
}

// The connection list between the parentheses (begin, end) of an instance.
Status ReadConnections(const Tokens& t, size_t begin, size_t end, const ModuleInterface& ports,
                       ModuleInstance* out) {
  bool wildcard = false;
  size_t position = 0;
  for (size_t i = begin; i < end;) {
    size_t item_end = i;
    while (item_end < end && !IsPunct(t, item_end, ',')) {
      size_t next =
          (IsPunct(t, item_end, '(') || IsPunct(t, item_end, '[') || IsPunct(t, item_end, '{'))
              ? CloseGroup(t, item_end)
              : item_end + 1;
      item_end = next;
    }
    if (IsPunct(t, i, '.') && IsPunct(t, i + 1, '*')) {
      wildcard = true;
    } else if (IsPunct(t, i, '.') && i + 1 < item_end && t[i + 1].kind == Kind::kIdentifier) {
      const std::string port(t[i + 1].text);
      if (IsPunct(t, i + 2, '(')) {
        const size_t close = CloseGroup(t, i + 2);
        out->connections[port] = Join(t, i + 3, close - 1);
      } else {
        out->connections[port] = port;  // .name
      }
    } else if (i < item_end) {
      if (position >= ports.ports.size())
        return Status::InvalidArgument("more positional connections than ports");
      out->connections[ports.ports[position].name] = Join(t, i, item_end);
    }
    ++position;
    i = item_end + 1;
  }
  if (wildcard)
    for (const auto& p : ports.ports) out->connections.emplace(p.name, p.name);
  return Status::Ok();
}

}  // namespace

StatusOr<ModuleInstance> FindSingleInstance(std::string_view text, std::string_view module,
                                            const ModuleInterface& ports) {
  const Tokens t = TokenizeVerilog(text);
  std::optional<ModuleInstance> found;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i].kind != Kind::kIdentifier || t[i].text != module) continue;
    if (i > 0 && (t[i - 1].text == "module" || t[i - 1].text == "endmodule")) continue;
    if (found) return Status::InvalidArgument(std::string(module) + " is instantiated twice");
    size_t j = i + 1;
    if (IsPunct(t, j, '#')) j = CloseGroup(t, j + 1);  // parameter overrides
    if (j >= t.size() || t[j].kind != Kind::kIdentifier || !IsPunct(t, j + 1, '('))
      return Status::InvalidArgument("cannot read the instance of " + std::string(module));
    ModuleInstance inst;
    inst.instance = std::string(t[j].text);
    const size_t close = CloseGroup(t, j + 1);
    if (close >= t.size() + 1 || close == t.size())
      return Status::InvalidArgument("unclosed instance of " + std::string(module));
    EVALD_RETURN_IF_ERROR(ReadConnections(t, j + 2, close - 1, ports, &inst));
    found = std::move(inst);
    i = close;
  }
  if (!found) return Status::NotFound(std::string(module) + " is not instantiated");
  return *found;
}

}  // namespace evald
