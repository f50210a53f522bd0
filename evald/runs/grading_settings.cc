#include "evald/runs/grading_settings.h"

#include "base/numbers.h"

namespace evald {

namespace {

constexpr uint32_t kMaxSimulateTimeoutMs = 3600 * 1000;

Status CheckCrossChecks(const v1::CrossCheckSettings& c) {
  if (c.bound_cycles() < 0 || c.bound_cycles() > 1000)
    return Status::InvalidArgument("cross_checks.bound_cycles must be 1..1000 (0: default)");
  if (c.cpu_seconds() > 600)
    return Status::InvalidArgument("cross_checks.cpu_seconds must be 1..600 (0: default)");
  if (c.synthesis_cpu_seconds() > 600)
    return Status::InvalidArgument(
        "cross_checks.synthesis_cpu_seconds must be 1..600 (0: default)");
  return Status::Ok();
}

// "off" | "passes" | "all" | "default" into the settings' cross-checks.
Status ApplyFormal(const std::string& choice, v1::CrossCheckSettings* c) {
  if (choice == "default") {
    const bool synthesis = c->synthesis();
    *c = DefaultCrossCheckSettings();
    c->set_synthesis(synthesis);
    return Status::Ok();
  }
  if (choice != "off" && choice != "passes" && choice != "all")
    return Status::InvalidArgument("unknown --formal '" + choice +
                                   "' (expected off, passes or all)");
  c->set_formal(choice != "off");
  c->set_formal_failures(choice == "all");
  c->set_optional(false);  // asked for explicitly: no Yosys is an error, not a skip
  return Status::Ok();
}

StatusOr<int64_t> Number(const std::string& flag, const std::string& value, int64_t lo,
                         int64_t hi) {
  auto n = ParseInt(value, lo, hi);
  if (!n)
    return Status::InvalidArgument(flag + " expects a number " + std::to_string(lo) + ".." +
                                   std::to_string(hi) + ", not '" + value + "'");
  return *n;
}

std::vector<GradingFlag> BuildFlags() {
  using S = v1::GradingSettings;
  std::vector<GradingFlag> f;
  f.push_back({"--simulator",
               "iverilog | verilator | auto (Icarus, and Verilator where only it grades)", false,
               [](const std::string& v, S* s) {
                 s->set_simulator(v);
                 return Status::Ok();
               }});
  f.push_back({"--exact-counts",
               "simulate wrong designs to the end for exact mismatch counts (slower; verdicts "
               "are the same)",
               true, [](const std::string&, S* s) {
                 s->set_exact_mismatch_counts(true);
                 return Status::Ok();
               }});
  f.push_back({"--sim-timeout",
               "fixed simulation CPU-time limit in seconds (default: 20x the reference's + "
               "0.5 s, at least 1 s)",
               false, [](const std::string& v, S* s) {
                 auto n = Number("--sim-timeout", v, 1, kMaxSimulateTimeoutMs / 1000);
                 if (!n.ok()) return n.status();
                 s->set_simulate_timeout_ms(static_cast<uint32_t>(*n) * 1000);
                 return Status::Ok();
               }});
  f.push_back({"--require-isolation", "fail rather than grade in a degraded sandbox", true,
               [](const std::string&, S* s) {
                 s->set_require_full_isolation(true);
                 return Status::Ok();
               }});
  f.push_back({"--formal",
               "formal equivalence with the reference, counterexamples replayed in simulation: "
               "off | passes (samples that pass simulation) | all (also failures that compiled "
               "and ran); default: passes, skipped with a warning where Yosys cannot run",
               false, [](const std::string& v, S* s) {
                 if (!s->has_cross_checks())
                   *s->mutable_cross_checks() = DefaultCrossCheckSettings();
                 return ApplyFormal(v, s->mutable_cross_checks());
               }});
  f.push_back({"--synth",
               "Yosys synthesis statistics of passing samples (cells, area, depth, ratio to the "
               "reference)",
               true, [](const std::string&, S* s) {
                 if (!s->has_cross_checks())
                   *s->mutable_cross_checks() = DefaultCrossCheckSettings();
                 s->mutable_cross_checks()->set_synthesis(true);
                 s->mutable_cross_checks()->set_optional(false);
                 return Status::Ok();
               }});
  f.push_back({"--formal-bound",
               "clock cycles a sequential check covers from the testbench's start state", false,
               [](const std::string& v, S* s) {
                 auto n = Number("--formal-bound", v, 1, 1000);
                 if (!n.ok()) return n.status();
                 if (!s->has_cross_checks())
                   *s->mutable_cross_checks() = DefaultCrossCheckSettings();
                 s->mutable_cross_checks()->set_bound_cycles(static_cast<int32_t>(*n));
                 return Status::Ok();
               }});
  f.push_back({"--check-seconds", "CPU seconds for one formal check (running out: unknown)", false,
               [](const std::string& v, S* s) {
                 auto n = Number("--check-seconds", v, 1, 600);
                 if (!n.ok()) return n.status();
                 if (!s->has_cross_checks())
                   *s->mutable_cross_checks() = DefaultCrossCheckSettings();
                 s->mutable_cross_checks()->set_cpu_seconds(static_cast<uint32_t>(*n));
                 return Status::Ok();
               }});
  f.push_back({"--synth-seconds",
               "CPU seconds for one synthesis (default 10; running out: no figures)", false,
               [](const std::string& v, S* s) {
                 auto n = Number("--synth-seconds", v, 1, 600);
                 if (!n.ok()) return n.status();
                 if (!s->has_cross_checks())
                   *s->mutable_cross_checks() = DefaultCrossCheckSettings();
                 s->mutable_cross_checks()->set_synthesis_cpu_seconds(static_cast<uint32_t>(*n));
                 return Status::Ok();
               }});
  return f;
}

}  // namespace

v1::CrossCheckSettings DefaultCrossCheckSettings() {
  v1::CrossCheckSettings c;
  c.set_formal(true);
  c.set_optional(true);
  return c;
}

Status NormalizeGradingSettings(v1::GradingSettings* s) {
  if (s->simulator().empty()) s->set_simulator("iverilog");
  if (s->simulator() != "iverilog" && s->simulator() != "verilator" && s->simulator() != "auto")
    return Status::InvalidArgument("unknown simulator '" + s->simulator() +
                                   "' (expected iverilog, verilator or auto)");
  if (s->simulate_timeout_ms() > kMaxSimulateTimeoutMs)
    return Status::InvalidArgument("simulate_timeout_ms must be at most 3600000 (0: derived)");
  if (!s->has_cross_checks()) *s->mutable_cross_checks() = DefaultCrossCheckSettings();
  v1::CrossCheckSettings* c = s->mutable_cross_checks();
  EVALD_RETURN_IF_ERROR(CheckCrossChecks(*c));
  if (!c->formal()) c->set_formal_failures(false);
  if (c->formal() || c->synthesis()) {  // the budgets stated, as the cache keys are made of them
    if (c->bound_cycles() == 0) c->set_bound_cycles(FormalOptions{}.bound_cycles);
    if (c->cpu_seconds() == 0) c->set_cpu_seconds(FormalOptions{}.cpu_seconds);
  }
  if (c->synthesis() && c->synthesis_cpu_seconds() == 0)
    c->set_synthesis_cpu_seconds(CrossCheckOptions{}.synthesis_cpu_seconds);
  return Status::Ok();
}

void ApplyGradingDefaults(const v1::GradingSettings& d, v1::GradingSettings* s) {
  if (s->simulator().empty()) s->set_simulator(d.simulator());
  if (!s->exact_mismatch_counts()) s->set_exact_mismatch_counts(d.exact_mismatch_counts());
  if (s->simulate_timeout_ms() == 0) s->set_simulate_timeout_ms(d.simulate_timeout_ms());
  if (!s->require_full_isolation()) s->set_require_full_isolation(d.require_full_isolation());
  if (!s->has_cross_checks() && d.has_cross_checks()) *s->mutable_cross_checks() = d.cross_checks();
}

void MoveLegacyGradingFields(v1::RunSpec* spec) {
  v1::GradingSettings* g = spec->mutable_grading();
  if (g->simulator().empty()) g->set_simulator(spec->simulator());
  if (spec->exact_mismatch_counts()) g->set_exact_mismatch_counts(true);
  if (spec->has_cross_checks() && !g->has_cross_checks())
    *g->mutable_cross_checks() = spec->cross_checks();
  spec->clear_simulator();
  spec->clear_exact_mismatch_counts();
  spec->clear_cross_checks();
}

const std::vector<GradingFlag>& GradingFlags() {
  static const std::vector<GradingFlag> kFlags = BuildFlags();
  return kFlags;
}

StatusOr<SimulatorChoice> SimulatorChoiceFromProto(const v1::GradingSettings& settings) {
  SimulatorChoice c;
  if (settings.simulator() == "auto") {
    c.automatic = true;
    return c;
  }
  auto kind = ParseSimulator(settings.simulator().empty() ? "iverilog" : settings.simulator());
  if (!kind.ok()) return Status::InvalidArgument(kind.status().message() + " (or auto)");
  c.primary = *kind;
  return c;
}

std::optional<uint32_t> FixedSimulateTimeout(const v1::GradingSettings& settings) {
  if (settings.simulate_timeout_ms() == 0) return std::nullopt;
  return settings.simulate_timeout_ms();
}

CrossCheckOptions CrossCheckOptionsFromProto(const v1::CrossCheckSettings& settings) {
  CrossCheckOptions o;
  o.formal = settings.formal();
  o.formal_failures = settings.formal() && settings.formal_failures();
  o.synthesis = settings.synthesis();
  o.required = !settings.optional();
  if (settings.bound_cycles() > 0) o.formal_options.bound_cycles = settings.bound_cycles();
  if (settings.cpu_seconds() > 0) o.formal_options.cpu_seconds = settings.cpu_seconds();
  if (settings.synthesis_cpu_seconds() > 0)
    o.synthesis_cpu_seconds = settings.synthesis_cpu_seconds();
  return o;
}

v1::CrossCheckSettings CrossCheckOptionsToProto(const CrossCheckOptions& options) {
  v1::CrossCheckSettings s;
  s.set_formal(options.formal);
  s.set_formal_failures(options.formal && options.formal_failures);
  s.set_synthesis(options.synthesis);
  s.set_optional(!options.required);
  if (options.any()) {
    s.set_bound_cycles(options.formal_options.bound_cycles);
    s.set_cpu_seconds(options.formal_options.cpu_seconds);
  }
  if (options.synthesis) s.set_synthesis_cpu_seconds(options.synthesis_cpu_seconds);
  return s;
}

}  // namespace evald
