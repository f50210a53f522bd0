#include "harness/integrity_check.h"

#include <set>
#include <string>

#include "base/py_text.h"
#include "harness/verilog_lexer.h"

namespace evald {

namespace {

using Kind = VerilogToken::Kind;
using NameSet = std::set<std::string, std::less<>>;

// Names the verilog-eval testbench gives its own scopes. evald renames them per run anyway
// (testbench_hardening), so a reference to one could only ever fail to compile; naming it is
// nonetheless an attempt to reach outside the design and is reported as such.
const NameSet kTestbenchScopes = {"tb",     "stim1", "good1", "top_module1",
                                  "stats1", "$root", "$unit"};

// System tasks and functions a design may not call, with the reason (docs/verdicts.md).
struct Forbidden {
  const char* name;
  const char* why;
};
const Forbidden kForbiddenSystemNames[] = {
    {"$finish", "ends the simulation (only the testbench may)"},
    {"$stop", "ends the simulation (only the testbench may)"},
    {"$fatal", "ends the simulation (only the testbench may)"},
    {"$exit", "ends the simulation (only the testbench may)"},
    {"$system", "runs host commands"},
    {"$c", "runs host code (Verilator)"},
    {"$cpure", "runs host code (Verilator)"},
    {"$value$plusargs", "reads the simulator's command line"},
    {"$test$plusargs", "reads the simulator's command line"},
    {"$save", "simulator state files"},
    {"$restart", "simulator state files"},
    {"$incsave", "simulator state files"},
    {"$reset", "restarts the simulation"},
    {"$input", "reads commands from a file"},
    {"$log", "writes a log file"},
    {"$nolog", "writes a log file"},
    {"$key", "writes a key file"},
    {"$nokey", "writes a key file"},
    {"$sdf_annotate", "reads a file"},
    {"$stacktrace", "prints the simulator's call stack"},
    {"$printtimescale", "prints the instance path"},
    {"$list", "prints the design hierarchy"},
    {"$scope", "changes the interactive scope"},
    {"$showscopes", "prints the design hierarchy"},
    {"$showvars", "prints the design hierarchy"},
};
// System names starting with "$f" that are plain functions, not file I/O.
const NameSet kAllowedF = {"$floor", "$fell", "$fell_gclk", "$falling_gclk", "$future_gclk"};

// Why a system task or function is refused; nullptr when it is allowed.
const char* ForbiddenSystemName(std::string_view name) {
  for (const auto& f : kForbiddenSystemNames)
    if (name == f.name) return f.why;
  if (name.size() > 2 && name[1] == 'c' &&
      name.find_first_not_of("0123456789", 2) == std::string_view::npos)
    return "runs host code (Verilator)";  // $c8 ... $c64
  if (py::StartsWith(name, "$f") && !kAllowedF.count(name)) return "file I/O";
  if (py::StartsWith(name, "$readmem") || py::StartsWith(name, "$sreadmem")) return "reads a file";
  if (py::StartsWith(name, "$writemem")) return "writes a file";
  if (py::StartsWith(name, "$dump")) return "writes a waveform file";
  return nullptr;
}

// %m and %l print the instance path and library binding: what a design sees of the testbench.
bool FormatNamesScope(std::string_view body) {
  for (size_t i = 0; i + 1 < body.size(); ++i) {
    if (body[i] != '%') continue;
    size_t j = i + 1;
    while (j < body.size() && ((body[j] >= '0' && body[j] <= '9') || body[j] == '-')) ++j;
    if (j < body.size() && (body[j] == 'm' || body[j] == 'M' || body[j] == 'l' || body[j] == 'L'))
      return true;
    if (j < body.size() && body[j] == '%') i = j;  // "%%" is a literal percent sign
  }
  return false;
}

IntegrityFinding Violation(const VerilogToken& t, const std::string& what) {
  return {true, "line " + std::to_string(t.line) + ": " + what};
}

// The first violation of one token, given the next one and the names the design uses itself.
IntegrityFinding CheckToken(const VerilogToken& t, const VerilogToken* next,
                            const NameSet& used_locally, int* conditional_depth) {
  const std::string text(t.text);
  switch (t.kind) {
    case Kind::kIdentifier:
      if (t.text == "RefModule") return Violation(t, "names the reference module RefModule");
      if (kTestbenchScopes.count(t.text) && !used_locally.count(t.text) && next &&
          next->text == ".")
        return Violation(t, "hierarchical reference into the testbench (" + text + ".)");
      if ((t.text == "import" || t.text == "export") && next && next->kind == Kind::kString &&
          py::StartsWith(next->text, "DPI"))
        return Violation(t, "DPI " + text + " (native code)");
      if (t.text == "bind") return Violation(t, "bind statement (attaches code to other scopes)");
      if (t.text == "final") return Violation(t, "final block (runs after the testbench's end)");
      break;
    case Kind::kSystemName:
      if (kTestbenchScopes.count(t.text) && next && next->text == ".")
        return Violation(t, "hierarchical reference from " + text);
      if (const char* why = ForbiddenSystemName(t.text)) return Violation(t, text + ": " + why);
      break;
    case Kind::kString:
      if (FormatNamesScope(t.text))
        return Violation(t, "%m or %l in a string (prints the testbench's instance path)");
      break;
    case Kind::kDirective:
      if (t.text == "include") return Violation(t, "`include of an outside file");
      if (py::StartsWith(t.text, "systemc_") || t.text == "verilator_config")
        return Violation(t, "`" + text + " block (native code)");
      if (t.text == "ifdef" || t.text == "ifndef") ++*conditional_depth;
      if (t.text == "endif") --*conditional_depth;
      break;
    default:
      break;
  }
  return {};
}

}  // namespace

IntegrityFinding CheckDesignIntegrity(std::string_view design) {
  if (design.size() > kMaxLexedBytes)
    return {true, "the design is " + std::to_string(design.size()) + " bytes, over the " +
                      std::to_string(kMaxLexedBytes) + "-byte limit"};
  auto tokens = TokenizeVerilog(design);
  // A testbench scope name the design also uses on its own (declares it, say a struct
  // variable `stats1`) is the design's, not the testbench's.
  NameSet used_locally;
  for (size_t i = 0; i < tokens.size(); ++i) {
    bool dotted = i + 1 < tokens.size() && tokens[i + 1].text == ".";
    if (tokens[i].kind == Kind::kIdentifier && !dotted && kTestbenchScopes.count(tokens[i].text))
      used_locally.emplace(tokens[i].text);
  }
  int conditional_depth = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const VerilogToken* next = i + 1 < tokens.size() ? &tokens[i + 1] : nullptr;
    IntegrityFinding f = CheckToken(tokens[i], next, used_locally, &conditional_depth);
    if (f.violation) return f;
  }
  // An unclosed `ifdef in the design would swallow the testbench compiled after it.
  if (conditional_depth != 0) return {true, "unbalanced `ifdef/`endif (would hide the testbench)"};
  return {};
}

}  // namespace evald
