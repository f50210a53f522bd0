#include "evald/runs/verdict_fields.h"

#include "evald/runs/scoring.h"

namespace evald {

namespace {

// The log kept with a verdict: its end, where the simulator's errors and the result line are.
constexpr size_t kLogTailBytes = 2000;

std::string Tail(const std::string& s) {
  return s.size() <= kLogTailBytes ? s : s.substr(s.size() - kLogTailBytes);
}

}  // namespace

v1::SampleResult VerdictToProto(const Verdict& v) {
  v1::SampleResult r;
  r.set_verdict(std::string(1, v.category));
  r.set_passed(v.passed);
  r.set_mismatches(v.mismatches);
  r.set_samples_checked(v.samples_checked);
  r.set_mismatches_lower_bound(v.mismatches_lower_bound);
  r.set_benchmark_verdict(std::string(1, v.benchmark));
  r.set_detail(v.detail);
  r.set_compile_seconds(v.compile_seconds);
  r.set_simulate_seconds(v.simulate_seconds);
  r.set_simulate_cpu_seconds(v.simulate_cpu_seconds);
  r.set_log_tail(Tail(v.log));
  r.set_strict_passed(v.passed);
  if (v.cross_checked) SetCrossCheckFields(v, &r);
  return r;
}

namespace {

double Ratio(double a, double b) {
  return b > 0 ? a / b : 0;
}

FormalOutcome ParseOutcome(const std::string& name) {
  for (FormalOutcome o : {FormalOutcome::kProven, FormalOutcome::kBounded,
                          FormalOutcome::kCounterexample, FormalOutcome::kUnknown})
    if (FormalOutcomeName(o) == name) return o;
  return FormalOutcome::kNotRun;
}

v1::FormalCheck FormalProto(const FormalVerdict& f) {
  v1::FormalCheck p;
  p.set_outcome(std::string(FormalOutcomeName(f.outcome)));
  p.set_mode(f.mode);
  p.set_bound(f.bound);
  p.set_detail(f.detail);
  p.set_seconds(f.seconds);
  return p;
}

v1::SynthesisResult SynthProto(const SynthStats& s) {
  v1::SynthesisResult p;
  p.set_cells(s.cells);
  p.set_area(s.area);
  p.set_depth(s.depth);
  p.set_flip_flops(s.flip_flops);
  p.set_problem(s.ok && s.problem.empty() ? "" : s.problem.empty() ? "no figures" : s.problem);
  return p;
}

SynthStats SynthFromProto(const v1::SynthesisResult& p, bool present) {
  SynthStats s;
  s.ok = present && p.problem().empty();
  s.cells = p.cells();
  s.area = p.area();
  s.depth = p.depth();
  s.flip_flops = p.flip_flops();
  s.problem = p.problem();
  return s;
}

}  // namespace

void SetCrossCheckFields(const Verdict& v, v1::SampleResult* r) {
  const FormalVerdict& f = v.cross.formal;
  if (f.outcome != FormalOutcome::kNotRun) *r->mutable_formal() = FormalProto(f);
  const bool refuted = v.passed && f.outcome == FormalOutcome::kCounterexample;
  const bool proven = !v.passed && f.outcome == FormalOutcome::kProven;
  // kNotRun: only synthesis was asked for, and simulation's word stands alone. Otherwise the
  // sample is judged by the rule scoring applies to a whole report (scoring.h).
  const bool formal = f.outcome != FormalOutcome::kNotRun;
  const bool unverified = formal && UnverifiedPass(*r);
  r->set_cross_check(refuted ? "refuted" : proven ? "proven" : unverified ? "unverified" : "");
  r->set_strict_passed(formal ? StrictPass(*r) : v.passed);
  const SynthStats& s = v.cross.synthesis;
  if (!s.ok && s.problem.empty()) return;  // not synthesised
  v1::SynthesisResult* synth = r->mutable_synthesis();
  *synth = SynthProto(s);
  const SynthStats& ref = v.cross.reference_synthesis;
  if (s.ok && ref.ok) {
    synth->set_cells_ratio(Ratio(s.cells, ref.cells));
    synth->set_area_ratio(Ratio(s.area, ref.area));
    synth->set_depth_ratio(Ratio(s.depth, ref.depth));
  }
}

v1::CachedCrossCheck CrossCheckToProto(const CrossCheck& c) {
  v1::CachedCrossCheck record;
  if (c.formal.outcome != FormalOutcome::kNotRun) *record.mutable_formal() = FormalProto(c.formal);
  if (c.synthesis.ok || !c.synthesis.problem.empty())
    *record.mutable_synthesis() = SynthProto(c.synthesis);
  if (c.reference_synthesis.ok)
    *record.mutable_reference_synthesis() = SynthProto(c.reference_synthesis);
  return record;
}

CrossCheck CrossCheckFromProto(const v1::CachedCrossCheck& record) {
  CrossCheck c;
  if (record.has_formal()) {
    c.formal.outcome = ParseOutcome(record.formal().outcome());
    c.formal.mode = record.formal().mode();
    c.formal.bound = record.formal().bound();
    c.formal.detail = record.formal().detail();
    c.formal.seconds = record.formal().seconds();
  }
  c.synthesis = SynthFromProto(record.synthesis(), record.has_synthesis());
  c.reference_synthesis =
      SynthFromProto(record.reference_synthesis(), record.has_reference_synthesis());
  return c;
}

Verdict VerdictFromProto(const v1::SampleResult& r) {
  Verdict v;
  v.category = r.verdict().empty() ? '!' : r.verdict()[0];
  v.passed = r.passed();
  v.mismatches = r.mismatches();
  v.samples_checked = r.samples_checked();
  v.mismatches_lower_bound = r.mismatches_lower_bound();
  v.benchmark = r.benchmark_verdict().empty() ? '?' : r.benchmark_verdict()[0];
  v.detail = r.detail();
  v.compile_seconds = r.compile_seconds();
  v.simulate_seconds = r.simulate_seconds();
  v.simulate_cpu_seconds = r.simulate_cpu_seconds();
  v.log = r.log_tail();
  return v;
}

namespace {

char OutcomeLetter(CalibrationOutcome o) {
  switch (o) {
    case CalibrationOutcome::kGradable:
      return '.';
    case CalibrationOutcome::kUngradable:
      return 'X';
    case CalibrationOutcome::kFault:
      return '!';
  }
  return '!';
}

CalibrationOutcome OutcomeOfLetter(const std::string& letter, bool gradable) {
  if (gradable) return CalibrationOutcome::kGradable;
  return letter == "!" ? CalibrationOutcome::kFault : CalibrationOutcome::kUngradable;
}

}  // namespace

v1::ProblemCalibration CalibrationToProto(const std::string& name, const Calibration& c) {
  const char letter = OutcomeLetter(c.outcome);
  v1::ProblemCalibration p;
  p.set_problem(name);
  p.set_gradable(c.gradable);
  p.set_samples_checked(c.samples_checked);
  p.set_testbench_timeout(c.testbench_timeout);
  p.set_simulate_seconds(c.simulate_seconds);
  p.set_simulate_cpu_seconds(c.simulate_cpu_seconds);
  p.set_compile_seconds(c.compile_seconds);
  p.set_note(c.note);
  p.set_reference_verdict(std::string(1, letter));
  return p;
}

Calibration CalibrationFromProto(const v1::ProblemCalibration& p) {
  Calibration c;
  c.gradable = p.gradable();
  c.outcome = OutcomeOfLetter(p.reference_verdict(), p.gradable());
  c.samples_checked = p.samples_checked();
  c.testbench_timeout = p.testbench_timeout();
  c.simulate_seconds = p.simulate_seconds();
  c.simulate_cpu_seconds = p.simulate_cpu_seconds();
  c.compile_seconds = p.compile_seconds();
  c.note = p.note();
  return c;
}

}  // namespace evald
