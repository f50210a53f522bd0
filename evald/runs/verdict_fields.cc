#include "evald/runs/verdict_fields.h"

namespace evald {

namespace {

// The log kept with a verdict: its end, where the simulator's errors and the result line are.
constexpr size_t kLogTailBytes = 2000;

std::string Tail(const std::string& s) {
  return s.size() <= kLogTailBytes ? s : s.substr(s.size() - kLogTailBytes);
}

}  // namespace

v1::SampleResult VerdictFields(const Verdict& v) {
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
  r.set_log_tail(Tail(v.log));
  return r;
}

Verdict FromVerdictFields(const v1::SampleResult& r) {
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
  v.log = r.log_tail();
  return v;
}

v1::ProblemCalibration CalibrationProto(const std::string& name, const Calibration& c,
                                        char letter) {
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
  c.samples_checked = p.samples_checked();
  c.testbench_timeout = p.testbench_timeout();
  c.simulate_seconds = p.simulate_seconds();
  c.simulate_cpu_seconds = p.simulate_cpu_seconds();
  c.compile_seconds = p.compile_seconds();
  c.note = p.note();
  return c;
}

}  // namespace evald
