#include "harness/testbench_hardening.h"

#include <regex>

#include "evald/common/py_text.h"

namespace evald {

namespace {

// Replaces whole-word occurrences of `name` (Verilog identifiers: letters, digits, _ and $).
std::string RenameWord(const std::string& text, const std::string& name, const std::string& to) {
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

}  // namespace

StatusOr<HardenedBench> HardenTestbench(const std::string& testbench, const std::string& reference,
                                        const std::string& nonce) {
  HardenedBench h;
  h.tag = "[evald-" + nonce + "]";
  h.top = "tb_" + nonce;
  std::string tb = testbench, ref = reference;
  for (const char* scope : {"stim1", "good1", "top_module1", "stats1", "stimulus_gen"}) {
    tb = RenameWord(tb, scope, std::string(scope) + "_" + nonce);
  }
  tb = RenameWord(tb, "tb", h.top);
  tb = RenameWord(tb, "RefModule", "RefModule_" + nonce);
  ref = RenameWord(ref, "RefModule", "RefModule_" + nonce);

  // Tag the result and timeout lines inside their format strings.
  static const std::regex kResult(R"re("Mismatches:)re");
  static const std::regex kTimeout(R"re(\$display\s*\(\s*"TIMEOUT")re");
  if (!std::regex_search(tb, kResult))
    return Status::Corruption("testbench prints no \"Mismatches:\" result line");
  tb = std::regex_replace(tb, kResult, "\"" + h.tag + " Mismatches:");
  tb = std::regex_replace(tb, kTimeout, "$$display(\"" + h.tag + " TIMEOUT\"");
  h.testbench = std::move(tb);
  h.reference = std::move(ref);
  return h;
}

std::string ReferenceAsDesign(const std::string& reference) {
  return RenameWord(reference, "RefModule", "TopModule");
}

}  // namespace evald
