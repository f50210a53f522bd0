#include "harness/integrity_check.h"

#include <set>

#include "harness/verilog_lexer.h"

namespace evald {

namespace {

using Kind = VerilogToken::Kind;

// Names the verilog-eval testbench gives its own scopes. evald renames them per run anyway
// (testbench_hardening), so a reference to one could only ever fail to compile; naming it is
// nonetheless an attempt to reach outside the design and is reported as such.
const std::set<std::string, std::less<>> kTestbenchScopes = {
    "tb", "stim1", "good1", "top_module1", "stats1", "$root", "$unit"};

const std::set<std::string, std::less<>> kNativeCodeTasks = {"$system", "$c",   "$cpure", "$c8",
                                                             "$c16",    "$c32", "$c64"};

IntegrityFinding Violation(const VerilogToken& t, const std::string& what) {
  return {true, "line " + std::to_string(t.line) + ": " + what};
}

}  // namespace

IntegrityFinding CheckDesignIntegrity(std::string_view design) {
  auto tokens = TokenizeVerilog(design);
  // A testbench scope name the design also uses on its own (declares it, say a struct
  // variable `stats1`) is the design's, not the testbench's.
  std::set<std::string, std::less<>> used_locally;
  for (size_t i = 0; i < tokens.size(); ++i) {
    bool dotted = i + 1 < tokens.size() && tokens[i + 1].text == ".";
    if (tokens[i].kind == Kind::kIdentifier && !dotted) used_locally.insert(tokens[i].text);
  }
  int conditional_depth = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const auto& t = tokens[i];
    const VerilogToken* next = i + 1 < tokens.size() ? &tokens[i + 1] : nullptr;
    switch (t.kind) {
      case Kind::kIdentifier:
        if (t.text == "RefModule") return Violation(t, "names the reference module RefModule");
        if (kTestbenchScopes.count(t.text) && !used_locally.count(t.text) && next &&
            next->text == ".")
          return Violation(t, "hierarchical reference into the testbench (" + t.text + ".)");
        if ((t.text == "import" || t.text == "export") && next && next->kind == Kind::kString &&
            next->text.rfind("DPI", 0) == 0)
          return Violation(t, "DPI " + t.text + " (native code)");
        if (t.text == "bind") return Violation(t, "bind statement (attaches code to other scopes)");
        break;
      case Kind::kSystemName:
        if (kTestbenchScopes.count(t.text) && next && next->text == ".")
          return Violation(t, "hierarchical reference from " + t.text);
        if (kNativeCodeTasks.count(t.text)) return Violation(t, t.text + " runs host code");
        break;
      case Kind::kDirective:
        if (t.text == "include") return Violation(t, "`include of an outside file");
        if (t.text.rfind("systemc_", 0) == 0 || t.text == "verilator_config")
          return Violation(t, "`" + t.text + " block (native code)");
        if (t.text == "ifdef" || t.text == "ifndef") ++conditional_depth;
        if (t.text == "endif") --conditional_depth;
        break;
      default:
        break;
    }
  }
  // An unclosed `ifdef in the design would swallow the testbench compiled after it.
  if (conditional_depth != 0) return {true, "unbalanced `ifdef/`endif (would hide the testbench)"};
  return {};
}

}  // namespace evald
