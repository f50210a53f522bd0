// The CI gate: decides from an evaluation report (and optionally a baseline) whether a
// checkpoint may pass, and renders the decision for CI job pages (JUnit XML, Markdown).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "evald/proto/compare.pb.h"
#include "evald/proto/eval.pb.h"

namespace evald {

struct GateThreshold {
  int k = 1;
  double minimum = 0;
};

// Parses "pass@1>=0.5" (also "pass@1=0.5", "1:0.5"); a list is comma separated.
StatusOr<std::vector<GateThreshold>> ParseThresholds(const std::string& text);

struct GateOptions {
  std::vector<GateThreshold> thresholds;
  const v1::EvalReport* baseline = nullptr;  // "no significant regression against" it
  std::string baseline_name = "baseline";    // how the renderings name it (a path, a run id)
  double alpha = 0.05;
  // At most this share of the passes may be ones formal could not judge (unverified); the
  // report must have formal checks.
  std::optional<double> max_unverified;
  // Fail when the report has input errors (lines of the samples file that were not graded):
  // a CI job whose inputs were partly unreadable has not measured what it claims.
  bool strict = false;
};

struct GateCheck {
  std::string name;  // "pass@1 >= 0.500", "no regression vs baseline"
  bool passed = false;
  std::string message;  // the figures behind it
};

struct GateResult {
  bool passed = true;
  std::vector<GateCheck> checks;
  std::optional<v1::Comparison> comparison;
  std::string Verdict() const { return passed ? "PASS" : "FAIL"; }
};

GateResult EvaluateGate(const v1::EvalReport& report, const GateOptions& options);

// A testsuite of the gate's checks (failures exactly when the gate fails) and one of the
// problems (informational: pass@k, verdict letters and, with a baseline, the flip).
std::string GateJUnitXml(const v1::EvalReport& report, const GateResult& result);
std::string GateMarkdown(const v1::EvalReport& report, const GateResult& result);

}  // namespace evald
