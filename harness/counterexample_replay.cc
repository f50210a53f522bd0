#include "harness/counterexample_replay.h"

#include "base/hash.h"
#include "base/numbers.h"
#include "base/py_text.h"
#include "harness/grader.h"
#include "harness/testbench_hardening.h"

namespace evald {

namespace {

bool PlainIdentifier(std::string_view s) {
  if (s.empty() || s.size() > 128 || (s[0] >= '0' && s[0] <= '9') || s[0] == '$') return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

std::string Literal(const std::string& bits) {
  return std::to_string(bits.size()) + "'b" + bits;
}

// `initial_bits` empty: no initial value. A declaration's initial value is there before any
// process runs, with no event: unlike an assignment at time 0, it is no edge (x to 1 would be a
// rising one) that the solver's model does not have.
std::string Declaration(const char* kind, size_t width, const std::string& name,
                        const std::string& initial_bits = "") {
  std::string range = width > 1 ? " [" + std::to_string(width - 1) + ":0]" : "";
  std::string init = initial_bits.empty() ? "" : " = " + Literal(initial_bits);
  return std::string("  ") + kind + range + " " + name + init + ";\n";
}

// The ports of an instance: inputs by their own names, outputs to `prefix` + name.
std::string Instance(const std::string& module, const std::string& instance, const TraceStep& shape,
                     const std::string& prefix) {
  std::string s = "  " + module + " " + instance + " (";
  bool first = true;
  for (const auto& [name, bits] : shape.inputs) {
    s += std::string(first ? "" : ", ") + "." + name + "(" + name + ")";
    first = false;
  }
  for (const auto& [name, bits] : shape.gold) {
    s += std::string(first ? "" : ", ") + "." + name + "(" + prefix + name + ")";
    first = false;
  }
  return s + ");\n";
}

// The testbench's comparison for every output at step `t`; the first differing step prints each
// differing output.
std::string Checks(const TraceStep& shape, int t, int cycle, const std::string& nonce) {
  const std::string differ = "differ_" + nonce, seen = "seen_" + nonce;
  std::string s = "    #1;\n    " + seen + " = 0;\n";
  for (const auto& [name, bits] : shape.gold) {
    const std::string r = "ref_" + nonce + "_" + name, d = "dut_" + nonce + "_" + name;
    s += "    if (" + r + " !== (" + r + " ^ " + d + " ^ " + r + ")) begin\n      if (" + differ +
         " == 0) " +
         TaggedDisplayCall(nonce, "step " + std::to_string(t) + " (cycle " + std::to_string(cycle) +
                                      "): " + name + " reference=%b design=%b") +
         ", " + r + ", " + d + ");\n      " + seen + " = 1;\n    end\n";
  }
  return s + "    " + differ + " = " + differ + " + " + seen + ";\n";
}

}  // namespace

StatusOr<std::string> BuildReplayBench(const std::vector<TraceStep>& trace, const std::string& mode,
                                       const std::string& nonce) {
  if (trace.empty()) return Status::InvalidArgument("empty counterexample");
  const TraceStep& shape = trace.front();
  if (shape.gold.empty()) return Status::InvalidArgument("the counterexample shows no outputs");
  const bool cycle = mode == "cycle";
  bool has_clk = false;
  std::string decl, body;
  // The solver's start. `clk` holds its start value from its declaration (low before the first
  // rising edge in the cycle model, its first step's value in the clock-phase one): set at time
  // 0 instead, x to 1 would be a rising edge the solver's model does not have. Every other input
  // is assigned at time 0, as a testbench does: that change from x is what starts the designs'
  // `always @*` blocks (a value present from the declaration would leave them unevaluated, their
  // outputs x, and x in the reference is compared with nothing).
  for (const auto& [name, bits] : shape.inputs) {
    if (!PlainIdentifier(name)) return Status::InvalidArgument("unexpected port name");
    const bool is_clk = name == "clk";
    has_clk = has_clk || is_clk;
    decl += Declaration("reg", bits.size(), name,
                        !is_clk ? ""
                        : cycle ? std::string(bits.size(), '0')
                                : bits);
  }
  for (const auto& [name, bits] : shape.gold) {
    if (!PlainIdentifier(name)) return Status::InvalidArgument("unexpected port name");
    decl += Declaration("wire", bits.size(), "ref_" + nonce + "_" + name);
    decl += Declaration("wire", bits.size(), "dut_" + nonce + "_" + name);
  }
  for (size_t i = 0; i < trace.size(); ++i) {
    const int t = static_cast<int>(i) + 1;
    body += "    // step " + std::to_string(t) + "\n";
    for (const auto& [name, bits] : trace[i].inputs) {
      if (name == "clk" && cycle) continue;  // the replay makes the cycle's edge itself
      if (name == "clk") body += "    clk = " + Literal(bits) + ";\n    #1;\n";
    }
    for (const auto& [name, bits] : trace[i].inputs)
      if (name != "clk") body += "    " + name + " = " + Literal(bits) + ";\n";
    body += Checks(shape, t, cycle ? t : (t + 1) / 2, nonce);
    if (cycle && has_clk) body += "    clk = 1'b1;\n    #1;\n    clk = 1'b0;\n    #1;\n";
  }
  const std::string differ = "differ_" + nonce;
  const std::string tag = "evald_tag_" + nonce;
  std::string tb = "`resetall\n`default_nettype none\n`timescale 1ps/1ps\nmodule replay_" + nonce +
                   ";\n" + decl + "  integer " + differ + ";\n  reg seen_" + nonce + ";\n  reg [" +
                   std::to_string(8 * kResultSecretLength - 1) + ":0] " + tag + ";\n";
  tb += Instance("evald_ref_" + nonce, "reference_" + nonce, shape, "ref_" + nonce + "_");
  tb += Instance("evald_dut_" + nonce, "design_" + nonce, shape, "dut_" + nonce + "_");
  tb += "  initial begin\n    if (!$value$plusargs(\"evald_tag=%s\", " + tag + ")) " + tag +
        " = 0;\n    " + differ + " = 0;\n";
  tb += body + "    " + TaggedDisplayCall(nonce, "REPLAY %0d") + ", " + differ +
        ");\n    $finish;\n  end\n";
  return tb + "endmodule\n";
}

namespace {

// Reads the tagged lines of the replay's output.
void ReadReplayOutput(const std::string& output, const std::string& tag, ReplayResult* r) {
  const std::string prefix = tag + " ";
  int result_lines = 0;
  for (auto line : py::SplitFileLines(output)) {
    if (!py::StartsWith(line, prefix)) continue;
    std::string_view body = line.substr(prefix.size());
    if (py::StartsWith(body, "REPLAY ")) {
      ++result_lines;
      r->differing_steps = static_cast<int>(ParseInt(body.substr(7), 0, 1 << 30).value_or(-1));
    } else if (py::StartsWith(body, "step ")) {
      if (!r->first_difference.empty()) r->first_difference += "; ";
      r->first_difference += std::string(body.substr(0, 400));
    }
  }
  r->ran = result_lines == 1 && r->differing_steps >= 0;
  if (!r->ran) r->problem = "the replay did not reach its end";
}

}  // namespace

ReplayResult ReplayCounterexample(SandboxWorker& worker, const Problem& problem,
                                  const std::string& design, const FormalRun& formal,
                                  const SimulatorLimits& limits) {
  ReplayResult r;
  const std::string nonce = RandomHex(8), secret = RandomHex(kResultSecretLength / 2);
  auto bench = BuildReplayBench(formal.trace, formal.mode, nonce);
  if (!bench.ok()) {
    r.problem = bench.status().message();
    return r;
  }
  auto judge = PrepareJudgeReference(problem.reference, nonce, "reference_" + nonce);
  if (!judge.ok()) {
    r.problem = judge.status().message();
    return r;
  }
  sandbox::JobRequest job;
  const std::string d = "design_" + nonce + ".sv", t = "replay_" + nonce + ".sv",
                    ref = "ref_" + nonce + ".sv", bin = "replay_" + nonce;
  (*job.mutable_files())[d] = design;
  (*job.mutable_files())[t] = *bench;
  (*job.mutable_files())[ref] = judge->text;
  job.set_stop_on_failure(true);
  auto* compile = job.add_steps();
  *compile = StepUnderLimits(limits, true);
  for (const std::string& a :
       {std::string("iverilog"), std::string("-g2012"), std::string("-Wno-timescale"),
        std::string("-s"), "replay_" + nonce, std::string("-o"), bin, d, t, ref})
    compile->add_argv(a);
  *job.add_steps() = SimulationStep(SimulatorKind::kIcarus, bin, secret, limits);
  auto response = worker.Run(job);
  if (!response.ok() || !response->error().empty()) {
    r.fault = true;
    r.problem = response.ok() ? response->error() : response.status().message();
    return r;
  }
  if (response->steps_size() < 2 || response->steps(0).exit_code() != 0) {
    r.problem =
        "the replay did not compile: " +
        (response->steps_size() > 0 ? std::string(response->steps(0).output().substr(0, 300))
                                    : std::string("no output"));
    return r;
  }
  ReadReplayOutput(response->steps(1).error_output(), ResultTag(secret), &r);
  return r;
}

}  // namespace evald
