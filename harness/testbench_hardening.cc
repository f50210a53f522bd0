#include "harness/testbench_hardening.h"

#include "base/py_text.h"

namespace evald {

std::string RenameIdentifier(const std::string& text, const std::string& name,
                             const std::string& to) {
  std::string out;
  size_t pos = 0;
  auto ident = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$';
  };
  while (true) {
    size_t hit = text.find(name, pos);
    if (hit == std::string::npos) break;
    bool left_ok = hit == 0 || !ident(text[hit - 1]);
    bool right_ok = hit + name.size() >= text.size() || !ident(text[hit + name.size()]);
    out.append(text, pos, hit - pos);
    out.append(left_ok && right_ok ? to : name);
    pos = hit + name.size();
  }
  out.append(text, pos, std::string::npos);
  return out;
}

namespace {

// Puts `tag` in front of the text of every `$display("TIMEOUT"` (blanks allowed around the
// parenthesis), in one pass.
std::string TagTimeoutLines(const std::string& tb, const std::string& tag) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t hit = tb.find("$display", pos);
    if (hit == std::string::npos) break;
    size_t j = hit + 8;
    while (j < tb.size() && blank(tb[j])) ++j;
    bool open = j < tb.size() && tb[j] == '(';
    if (open) ++j;
    while (open && j < tb.size() && blank(tb[j])) ++j;
    bool timeout = open && tb.compare(j, 9, "\"TIMEOUT\"") == 0;
    out.append(tb, pos, timeout ? j + 1 - pos : hit + 8 - pos);
    if (timeout) out += tag + " ";
    pos = timeout ? j + 1 : hit + 8;
  }
  out.append(tb, pos, std::string::npos);
  return out;
}

}  // namespace

StatusOr<HardenedBench> HardenTestbench(const std::string& testbench, const std::string& reference,
                                        const std::string& nonce, const std::string& secret,
                                        bool stop_at_first_mismatch) {
  HardenedBench h;
  h.tag = "[evald-" + secret + "]";
  h.top = "tb_" + nonce;
  std::string tb = testbench, ref = reference;
  for (const char* scope : {"stim1", "good1", "top_module1", "stats1", "stimulus_gen"}) {
    tb = RenameIdentifier(tb, scope, std::string(scope) + "_" + nonce);
  }
  tb = RenameIdentifier(tb, "tb", h.top);
  tb = RenameIdentifier(tb, "RefModule", "RefModule_" + nonce);
  ref = RenameIdentifier(ref, "RefModule", "RefModule_" + nonce);

  // Tag the result and timeout lines inside their format strings.
  if (tb.find("\"Mismatches:") == std::string::npos)
    return Status::Corruption("testbench prints no \"Mismatches:\" result line");
  tb = py::ReplaceAll(tb, "\"Mismatches:", "\"" + h.tag + " Mismatches:");
  h.testbench = TagTimeoutLines(tb, h.tag);
  if (stop_at_first_mismatch) {
    // verilog-eval's testbenches count a mismatching sample with exactly this statement, once,
    // inside the `if (!tb_match) begin ... end` of their checking block. A testbench without
    // it simply runs to its end.
    const std::string counter = "stats1_" + nonce + ".errors++;";
    const size_t at = h.testbench.find(counter);
    if (at != std::string::npos && h.testbench.find(counter, at + 1) == std::string::npos) {
      h.testbench.insert(at + counter.size(), " $finish;");
      h.stops_at_first_mismatch = true;
    }
  }
  h.reference = std::move(ref);
  return h;
}

std::string ReferenceAsDesign(const std::string& reference) {
  return RenameIdentifier(reference, "RefModule", "TopModule");
}

}  // namespace evald
