#include "harness/testbench_hardening.h"

#include <functional>
#include <optional>
#include <set>

#include "base/py_text.h"
#include "base/verilog_identifier.h"
#include "harness/design_isolation.h"
#include "harness/instance_connections.h"
#include "harness/judge_renaming.h"
#include "harness/verilog_lexer.h"

namespace evald {

std::string ResultTag(const std::string& secret) {
  return "[evald-" + secret + "]";
}

std::string ResultTagPlusarg(const std::string& secret) {
  return "+evald_tag=" + secret;
}

std::string ResultTagDeclaration(const std::string& nonce) {
  const std::string var = "evald_tag_" + nonce;
  return "\n  reg [" + std::to_string(8 * kResultSecretLength - 1) + ":0] " + var +
         ";\n  initial if (!$value$plusargs(\"evald_tag=%s\", " + var + ")) " + var + " = 0;\n";
}

std::string TaggedDisplayCall(const std::string& nonce, const std::string& format) {
  // 32'h8000_0002: the simulators' descriptor for standard error.
  return "$fdisplay(32'h8000_0002, \"[evald-%0s] " + format + "\", evald_tag_" + nonce;
}

namespace {

using Kind = VerilogToken::Kind;
using NameSet = std::set<std::string, std::less<>>;

NameSet PortNames(const ModuleInterface& interface) {
  NameSet names;
  for (const auto& p : interface.ports) names.insert(p.name);
  return names;
}

// The testbench's result and TIMEOUT displays become tagged writes to standard error:
// $display("Mismatches: ...", a, b) -> $fdisplay(STDERR, "[evald-%0s] Mismatches: ...", tag, a, b)
StatusOr<std::string> TagResultLines(const std::string& tb, const std::string& nonce) {
  size_t results = 0;
  std::string out =
      TagDisplays(tb, nonce, [&](std::string_view body) -> std::optional<std::string> {
        if (py::StartsWith(body, "Mismatches:")) {
          ++results;
          return "";
        }
        if (body == "TIMEOUT") return "";
        return std::nullopt;
      });
  if (results == 0) return Status::Corruption("testbench prints no \"Mismatches:\" result line");
  return out;
}

}  // namespace

std::string TagDisplays(const std::string& tb, const std::string& nonce,
                        const std::function<std::optional<std::string>(std::string_view)>& label) {
  const auto t = TokenizeVerilog(tb);
  std::string out;
  size_t copied = 0;
  for (size_t i = 0; i + 2 < t.size(); ++i) {
    if (t[i].kind != Kind::kSystemName || t[i].text != "$display" || t[i + 1].text != "(" ||
        t[i + 2].kind != Kind::kString)
      continue;
    const std::string_view body = t[i + 2].text;
    const auto prefix = label(body);
    if (!prefix) continue;
    const size_t call = static_cast<size_t>(t[i].text.data() - tb.data());
    const size_t string_end = static_cast<size_t>(body.data() - tb.data()) + body.size() + 1;
    out.append(tb, copied, call - copied);
    out += TaggedDisplayCall(nonce, *prefix + std::string(body));
    copied = string_end;
  }
  out.append(tb, copied, std::string::npos);
  return out;
}

StatusOr<std::string> InsertAfterHeader(const std::string& source, const std::string& module,
                                        const std::string& text) {
  const auto t = TokenizeVerilog(source);
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i].text != "module" || t[i + 1].text != module) continue;
    int depth = 0;
    for (size_t j = i + 2; j < t.size(); ++j) {
      if (t[j].text == "(") ++depth;
      if (t[j].text == ")") --depth;
      if (depth == 0 && t[j].text == ";") {
        const size_t at = static_cast<size_t>(t[j].text.data() - source.data()) + 1;
        return source.substr(0, at) + text + source.substr(at);
      }
    }
  }
  return Status::Corruption("testbench has no module " + module);
}

StatusOr<ModuleInterface> ReadReferenceInterface(const std::string& reference) {
  InterfaceReading reading = ReadModuleInterface(reference, "RefModule");
  if (reading.outcome != InterfaceReading::Outcome::kFound)
    return Status::Corruption(reading.problem.empty()
                                  ? std::string("the reference defines no module RefModule")
                                  : "the reference's interface: " + reading.problem);
  return reading.interface;
}

StatusOr<JudgeReference> PrepareJudgeReference(const std::string& reference,
                                               const std::string& nonce,
                                               const std::string& reference_instance) {
  auto interface = ReadReferenceInterface(reference);
  if (!interface.ok()) return interface.status();
  JudgeReference j;
  j.interface = std::move(*interface);
  j.reference_wrapper = "evald_ref_" + nonce;
  j.design_wrapper = "evald_dut_" + nonce;
  NameSet keep = PortNames(j.interface);
  keep.insert("RefModule");
  const std::string renamed =
      RenameIdentifier(RenameJudgeNames(reference, keep, nonce), "RefModule", "RefModule_" + nonce);
  auto ref_wrapper = IsolationWrapper(
      j.interface,
      {j.reference_wrapper, "RefModule_" + nonce, "reference_" + nonce, nonce, "", {}});
  if (!ref_wrapper.ok()) return ref_wrapper.status().Annotate("the reference cannot be isolated");
  auto dut_wrapper = IsolationWrapper(
      j.interface,
      {j.design_wrapper, "TopModule", "design_" + nonce, nonce, reference_instance, {}});
  if (!dut_wrapper.ok()) return dut_wrapper.status().Annotate("the reference cannot be isolated");
  j.text = "`default_nettype none\n" + renamed + "\n" + *ref_wrapper + *dut_wrapper;
  return j;
}

namespace {

// The testbench's instances of the two wrappers; both must be driven by the same inputs, since
// the design's copies are taken from the reference's.
StatusOr<std::string> ReferenceInstance(const std::string& tb, const ModuleInterface& ports,
                                        const std::string& nonce) {
  auto ref = FindSingleInstance(tb, "evald_ref_" + nonce, ports);
  if (!ref.ok()) return Status::Corruption("the testbench's reference: " + ref.status().message());
  auto dut = FindSingleInstance(tb, "evald_dut_" + nonce, ports);
  if (!dut.ok()) return Status::Corruption("the testbench's design: " + dut.status().message());
  for (const auto& p : ports.ports) {
    if (p.direction != PortDeclaration::Direction::kInput) continue;
    if (ref->connections[p.name] != dut->connections[p.name])
      return Status::Corruption("the testbench drives input " + p.name +
                                " of the reference and of the design differently");
  }
  return ref->instance;
}

}  // namespace

StatusOr<HardenedBench> HardenTestbench(const std::string& testbench, const std::string& reference,
                                        const std::string& nonce, bool stop_at_first_mismatch) {
  auto interface = ReadReferenceInterface(reference);
  if (!interface.ok()) return interface.status();
  NameSet keep = PortNames(*interface);
  keep.insert({"TopModule", "RefModule"});
  std::string tb = RenameJudgeNames(testbench, keep, nonce);
  tb = RenameIdentifier(tb, "TopModule", "evald_dut_" + nonce);
  tb = RenameIdentifier(tb, "RefModule", "evald_ref_" + nonce);
  auto instance = ReferenceInstance(tb, *interface, nonce);
  if (!instance.ok()) return instance.status();
  auto judge = PrepareJudgeReference(reference, nonce, *instance);
  if (!judge.ok()) return judge.status();
  HardenedBench h;
  h.top = "tb_" + nonce;
  h.interface = judge->interface;
  h.reference = std::move(judge->text);
  auto tagged = TagResultLines(tb, nonce);
  if (!tagged.ok()) return tagged.status();
  auto with_tag = InsertAfterHeader(*tagged, h.top, ResultTagDeclaration(nonce));
  if (!with_tag.ok()) return with_tag.status();
  h.testbench = "`resetall\n`default_nettype none\n" + *with_tag;
  if (stop_at_first_mismatch) {
    // verilog-eval's testbenches count a mismatching sample with exactly this statement, once,
    // inside the `if (!tb_match) begin ... end` of their checking block. A testbench without
    // it simply runs to its end.
    const std::string counter = "stats1_" + nonce + ".errors_" + nonce + "++;";
    const size_t at = h.testbench.find(counter);
    if (at != std::string::npos && h.testbench.find(counter, at + 1) == std::string::npos) {
      h.testbench.insert(at + counter.size(), " $finish;");
      h.stops_at_first_mismatch = true;
    }
  }
  return h;
}

std::string ReferenceAsDesign(const std::string& reference) {
  return RenameIdentifier(reference, "RefModule", "TopModule");
}

}  // namespace evald
