#include "harness/integrity_check.h"

#include <algorithm>
#include <set>
#include <string>

#include "base/py_text.h"
#include "harness/dropped_bytes.h"
#include "harness/procedural_regions.h"
#include "harness/system_names.h"
#include "harness/verilog_lexer.h"

namespace evald {

namespace {

using Kind = VerilogToken::Kind;
using NameSet = std::set<std::string, std::less<>>;

// Names the verilog-eval testbench gives its own scopes. evald renames every name of the
// testbench per run anyway (testbench_hardening), so a reference to one could only ever fail
// to compile; naming it is nonetheless an attempt to reach outside the design and is reported.
const NameSet kTestbenchScopes = {"tb", "stim1", "good1", "top_module1", "stats1"};

// Keywords whose construct a design may not use at all, with the reason.
struct ForbiddenWord {
  const char* word;
  const char* why;
};
const ForbiddenWord kForbiddenWords[] = {
    {"bind", "bind statement (attaches code to other scopes)"},
    {"final", "final block (runs after the testbench's end)"},
    {"force", "force (takes a net over from its drivers)"},
    {"release", "release (of a forced net)"},
    {"deassign", "deassign (of a procedural continuous assignment)"},
    {"config", "config block (chooses which module an instance uses)"},
};

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

class TokenChecker {
 public:
  explicit TokenChecker(const std::vector<VerilogToken>& tokens)
      : t_(tokens), regions_(FindProceduralRegions(tokens)) {
    // A testbench scope name the design also uses on its own (declares it, say a struct
    // variable `stats1`) is the design's, not the testbench's.
    for (size_t i = 0; i < t_.size(); ++i) {
      bool dotted = i + 1 < t_.size() && t_[i + 1].text == ".";
      if (t_[i].kind == Kind::kIdentifier && !dotted && kTestbenchScopes.count(t_[i].text))
        used_locally_.emplace(t_[i].text);
    }
  }

  IntegrityFinding Run() {
    if (regions_.too_deep)
      return {true, "line " + std::to_string(regions_.too_deep_line) + ": statements nested over " +
                        std::to_string(kMaxStatementNesting) + " deep"};
    for (size_t i = 0; i < t_.size(); ++i) {
      IntegrityFinding f = Check(i);
      if (f.violation) return f;
    }
    return {};
  }

 private:
  const VerilogToken* Next(size_t i, size_t ahead = 1) const {
    return i + ahead < t_.size() ? &t_[i + ahead] : nullptr;
  }

  IntegrityFinding Check(size_t i) const {
    const VerilogToken& t = t_[i];
    switch (t.kind) {
      case Kind::kIdentifier:
        return CheckIdentifier(i);
      case Kind::kSystemName:
        return CheckSystemName(i);
      case Kind::kString:
        if (FormatNamesScope(t.text))
          return Violation(t, "%m or %l in a string (prints the testbench's instance path)");
        return {};
      default:
        return {};
    }
  }

  IntegrityFinding CheckIdentifier(size_t i) const {
    const VerilogToken& t = t_[i];
    const VerilogToken* next = Next(i);
    const std::string text(t.text);
    if (t.text == "RefModule") return Violation(t, "names the reference module RefModule");
    if (kTestbenchScopes.count(t.text) && !used_locally_.count(t.text) && next && next->text == ".")
      return Violation(t, "hierarchical reference into the testbench (" + text + ".)");
    if (t.escaped) {
      if (!t.text.empty() && t.text[0] == '$')
        return Violation(t, "escaped identifier \\" + text + " (a system task's name)");
      return {};
    }
    if ((t.text == "import" || t.text == "export") && next && next->kind == Kind::kString &&
        py::StartsWith(next->text, "DPI"))
      return Violation(t, "DPI " + text + " (native code)");
    for (const auto& f : kForbiddenWords)
      if (t.text == f.word) return Violation(t, f.why);
    if (t.text == "assign" && regions_.procedural[i])
      return Violation(t, "procedural assign (takes a variable over from its other assignments)");
    return {};
  }

  IntegrityFinding CheckSystemName(size_t i) const {
    const VerilogToken& t = t_[i];
    const std::string text(t.text);
    if (t.text == "$") return {};  // the last index of a queue or range, not a task
    if (t.text == "$root" || t.text == "$unit")
      return Violation(t, text + " (names reaching out of the design)");
    const AllowedSystemName* allowed = FindAllowedSystemName(t.text);
    if (allowed == nullptr) return Violation(t, text + ": " + std::string(RefusalReason(t.text)));
    if (allowed->needs_seed_variable) {
      // Exactly `$random ( identifier )`: the seed is a variable the design declares.
      const VerilogToken *open = Next(i), *seed = Next(i, 2), *close = Next(i, 3);
      bool seeded = open && open->text == "(" && seed && seed->kind == Kind::kIdentifier && close &&
                    close->text == ")";
      if (!seeded) return Violation(t, text + ": " + std::string(RefusalReason(t.text)));
    }
    return {};
  }

  const std::vector<VerilogToken>& t_;
  ProceduralRegions regions_;
  NameSet used_locally_;
};

IntegrityFinding SizeFinding(std::string_view text) {
  if (text.size() <= kMaxLexedBytes) return {};
  return {true, "the design is " + std::to_string(text.size()) + " bytes, over the " +
                    std::to_string(kMaxLexedBytes) + "-byte limit"};
}

// Directives as written: no outside files, no native code, balanced conditionals.
IntegrityFinding CheckWrittenDirectives(const std::vector<VerilogToken>& tokens) {
  int conditional_depth = 0;
  for (const auto& t : tokens) {
    if (t.kind != Kind::kDirective) continue;
    const std::string text(t.text);
    if (t.text == "include") return Violation(t, "`include of an outside file");
    if (py::StartsWith(t.text, "systemc_") || t.text == "verilator_config")
      return Violation(t, "`" + text + " block (native code)");
    if (t.text == "ifdef" || t.text == "ifndef") ++conditional_depth;
    if (t.text == "endif") --conditional_depth;
  }
  // An unclosed `ifdef in the design would swallow whatever is compiled after it.
  if (conditional_depth != 0) return {true, "unbalanced `ifdef/`endif (would hide the testbench)"};
  return {};
}

// The design must read the same to Verilator, which drops some bytes before it reads
// (dropped_bytes.h), as to Icarus and this check, which keep them: line ends are LF or CR LF
// (Icarus ends a line at a lone CR, Verilator drops it), and the tokens of the text Verilator
// writes out must be the text's own tokens, only stray dropped bytes gone (and no new comment).
// What is code, comment or string, and every name and value, is then the same for every reader.
// Comments, strings and escaped names may hold such bytes (the bytes of much UTF-8 text).
IntegrityFinding CheckOneReading(std::string_view design, const std::vector<VerilogToken>& tokens) {
  bool any = false;
  for (size_t i = 0; i < design.size(); ++i) {
    if (design[i] == '\r' && (i + 1 == design.size() || design[i + 1] != '\n')) {
      const auto line = std::count(design.begin(), design.begin() + i, '\n') + 1;
      return {true, "line " + std::to_string(line) +
                        ": a carriage return not followed by a line feed (Icarus ends a line "
                        "there, Verilator drops it)"};
    }
    any = any || VerilatorDropsInCode(design[i]);
  }
  if (!any) return {};
  const std::string as_verilator_reads = AsVerilatorReads(design);
  // Comments are blanked in what Verilator writes out; one that shows up there is a new one.
  const auto theirs = TokenizeVerilog(as_verilator_reads, /*keep_comments=*/true);
  size_t j = 0;
  for (const auto& t : tokens) {
    if (t.kind == Kind::kPunct && t.text.size() == 1 && VerilatorDropsInCode(t.text[0]))
      continue;  // a stray byte Verilator drops, joining nothing if what follows matches
    // CR LF line ends inside a string are LF to Verilator.
    std::string text(t.text);
    text.erase(std::remove(text.begin(), text.end(), '\r'), text.end());
    if (j >= theirs.size() || theirs[j].kind != t.kind || theirs[j].escaped != t.escaped ||
        theirs[j].text != text)
      return Violation(t,
                       "bytes Verilator drops (^Z or a byte of the byte order mark, in code) "
                       "change how the design reads");
    ++j;
  }
  if (j != theirs.size())
    return {true,
            "bytes Verilator drops (^Z or a byte of the byte order mark, in code) change how the "
            "design reads at its end"};
  return {};
}

// `name` alone on its line, with plain arguments: nothing a second preprocessing could expand.
bool PlainDirectiveLine(std::string_view line, std::string_view name) {
  std::string words;
  for (char c : line) words += (c == '/' ? ' ' : c);
  std::vector<std::string> w;
  for (auto part : py::SplitBlanks(py::Strip(words))) w.emplace_back(part);
  if (w.empty() || w[0] != "`" + std::string(name)) return false;
  auto unit = [](const std::string& s) {
    return s == "s" || s == "ms" || s == "us" || s == "ns" || s == "ps" || s == "fs";
  };
  auto magnitude_unit = [&](const std::string& s) {  // "1ns" or "1" then "ns"
    size_t digits = s.find_first_not_of("0123456789");
    if (digits == 0) return false;
    std::string m = s.substr(0, digits);
    return (m == "1" || m == "10" || m == "100") &&
           (digits == std::string::npos || unit(s.substr(digits)));
  };
  if (name == "timescale") {
    // `timescale 1ns/1ps, `timescale 1 ns / 1 ps and the mixed forms
    std::vector<std::string> parts;
    for (size_t k = 1; k < w.size(); ++k) {
      if (unit(w[k]) && !parts.empty() &&
          parts.back().find_first_not_of("0123456789") == std::string::npos)
        parts.back() += w[k];
      else
        parts.push_back(w[k]);
    }
    if (parts.size() != 2) return false;
    for (const auto& p : parts)
      if (!magnitude_unit(p) || p.find_first_not_of("0123456789") == std::string::npos)
        return false;
    return true;
  }
  if (name == "default_nettype") {
    static const std::set<std::string> kTypes = {
        "none", "wire", "tri", "tri0", "tri1", "wand", "triand", "wor", "trior", "trireg", "uwire"};
    return w.size() == 2 && kTypes.count(w[1]);
  }
  return w.size() == 1;
}

// The one-text rule: every backtick left is an inert directive alone on its line.
IntegrityFinding CheckNoFurtherExpansion(std::string_view compiled,
                                         const std::vector<VerilogToken>& tokens) {
  // Lines as the lexer counts them: ended by '\n' alone.
  std::vector<std::string_view> lines;
  for (size_t start = 0; start <= compiled.size();) {
    size_t end = compiled.find('\n', start);
    if (end == std::string_view::npos) end = compiled.size();
    lines.push_back(compiled.substr(start, end - start));
    start = end + 1;
  }
  size_t inert = 0;
  for (const auto& t : tokens) {
    if (t.kind == Kind::kComment) return Violation(t, "a comment remains in the compiled text");
    if (t.kind != Kind::kDirective) continue;
    const std::string name(t.text);
    if (!InertDirective(t.text))
      return Violation(t, "`" + name +
                              " remains after the design was preprocessed (it would be "
                              "expanded again when compiled)");
    std::string_view line = t.line >= 1 && static_cast<size_t>(t.line) <= lines.size()
                                ? lines[t.line - 1]
                                : std::string_view();
    if (!PlainDirectiveLine(line, t.text))
      return Violation(t, "`" + name + " must stand alone on its line with plain arguments");
    ++inert;
  }
  const size_t backticks = static_cast<size_t>(std::count(compiled.begin(), compiled.end(), '`'));
  if (backticks != inert) {
    // A backtick inside a string or an escaped name: no preprocessor may see it again.
    size_t at = compiled.find('`');
    for (const auto& t : tokens) {
      if (t.kind == Kind::kDirective) continue;
      if (t.text.find('`') != std::string_view::npos)
        return Violation(t, "a backtick inside a string or name after preprocessing");
    }
    return {true, "a backtick at byte " + std::to_string(at) + " remains after preprocessing"};
  }
  return {};
}

}  // namespace

bool InertDirective(std::string_view name) {
  return name == "timescale" || name == "default_nettype" || name == "resetall" ||
         name == "celldefine" || name == "endcelldefine";
}

IntegrityFinding CheckDesignIntegrity(std::string_view design) {
  if (auto f = SizeFinding(design); f.violation) return f;
  auto tokens = TokenizeVerilog(design);
  if (auto f = CheckOneReading(design, tokens); f.violation) return f;
  if (auto f = CheckWrittenDirectives(tokens); f.violation) return f;
  return TokenChecker(tokens).Run();
}

IntegrityFinding CheckCompiledDesign(std::string_view compiled) {
  if (auto f = SizeFinding(compiled); f.violation) return f;
  auto with_comments = TokenizeVerilog(compiled, /*keep_comments=*/true);
  if (auto f = CheckNoFurtherExpansion(compiled, with_comments); f.violation) return f;
  return TokenChecker(TokenizeVerilog(compiled)).Run();
}

}  // namespace evald
