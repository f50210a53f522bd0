#include "evald/gate/ci_gate.h"

#include <fmt/format.h>

#include <map>
#include <sstream>

#include "base/numbers.h"
#include "base/text_escape.h"
#include "evald/metrics/run_comparison.h"

namespace evald {

namespace {

// "pass@K>=X" (also "K>=X", "=" or ":" for ">="), blanks allowed around each part.
std::optional<GateThreshold> ParseThreshold(std::string_view item) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  item = trim(item);
  if (item.substr(0, 5) == "pass@") item.remove_prefix(5);
  size_t op = item.find_first_of(">=:");
  if (op == std::string_view::npos) return std::nullopt;
  size_t value_at = item.substr(op, 2) == ">=" ? op + 2
                    : item[op] == '>'          ? std::string_view::npos
                                               : op + 1;
  if (value_at == std::string_view::npos) return std::nullopt;
  auto k = ParseInt(trim(item.substr(0, op)), 1, 1000000);
  std::string_view value = trim(item.substr(value_at));
  // A plain decimal (no sign, no exponent): what the documented form promises.
  if (value.empty() || value.find_first_not_of("0123456789.") != std::string_view::npos)
    return std::nullopt;
  auto minimum = ParseDouble(value);
  if (!k || !minimum) return std::nullopt;
  return GateThreshold{static_cast<int>(*k), *minimum};
}

}  // namespace

StatusOr<std::vector<GateThreshold>> ParseThresholds(const std::string& text) {
  std::vector<GateThreshold> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto t = ParseThreshold(item);
    if (!t)
      return Status::InvalidArgument("threshold '" + EscapeControl(item) +
                                     "' is not of the form pass@K>=X (1 <= K <= 1000000)");
    if (t->minimum < 0 || t->minimum > 1)
      return Status::InvalidArgument("threshold '" + EscapeControl(item) + "': 0 <= X <= 1");
    out.push_back(*t);
  }
  return out;
}

namespace {

// The share of passes formal could not judge, against a maximum.
GateCheck UnverifiedCheck(const v1::EvalReport& report, double maximum) {
  GateCheck c;
  c.name = fmt::format("unverified passes <= {:.1f}% of passes", 100 * maximum);
  if (!report.grading().cross_checks().formal()) {
    c.message = "the report has no formal checks (grade with --formal passes or all)";
    return c;
  }
  int passes = 0;  // simulation passes, whatever metric the report was loaded for
  for (const auto& s : report.samples()) passes += s.verdict() == "." ? 1 : 0;
  const int unverified = report.summary().formal_unverified();
  const double share = passes ? static_cast<double>(unverified) / passes : 0.0;
  c.passed = share <= maximum + 1e-12;
  c.message = fmt::format("{} of {} passes unverified ({:.1f}%)", unverified, passes, 100 * share);
  return c;
}

}  // namespace

GateResult EvaluateGate(const v1::EvalReport& report, const GateOptions& options) {
  GateResult r;
  for (const auto& t : options.thresholds) {
    GateCheck c;
    c.name = fmt::format("pass@{} >= {:.4f}", t.k, t.minimum);
    auto it = report.summary().pass_at().find(std::to_string(t.k));
    if (it == report.summary().pass_at().end()) {
      c.passed = false;
      c.message = fmt::format("pass@{} is not in the report (too few samples per problem)", t.k);
    } else {
      c.passed = it->second + 1e-12 >= t.minimum;
      auto ci = report.summary().ci95().find(std::to_string(t.k));
      c.message = fmt::format("pass@{} = {:.4f}", t.k, it->second);
      if (ci != report.summary().ci95().end())
        c.message += fmt::format(" (95% CI {:.4f}-{:.4f})", ci->second.low(), ci->second.high());
    }
    r.passed &= c.passed;
    r.checks.push_back(std::move(c));
  }
  if (options.strict) {
    GateCheck c;
    c.name = "no input errors (--strict)";
    const int errors = report.summary().input_errors();
    c.passed = errors == 0;
    c.message = errors == 0 ? "every line of the samples was graded"
                            : fmt::format("{} input error(s): lines not graded", errors);
    if (errors > 0 && report.input_errors_size() > 0)
      c.message += fmt::format(" (first: line {}: {})", report.input_errors(0).line(),
                               report.input_errors(0).message().substr(0, 120));
    r.checks.push_back(std::move(c));
    r.passed &= r.checks.back().passed;
  }
  if (options.max_unverified) {
    r.checks.push_back(UnverifiedCheck(report, *options.max_unverified));
    r.passed &= r.checks.back().passed;
  }
  if (options.baseline) {
    CompareOptions co;
    co.alpha = options.alpha;
    co.label_a = options.baseline_name;
    co.label_b = "candidate";
    co.ks.clear();
    for (int k : report.k()) co.ks.push_back(k);
    if (co.ks.empty()) co.ks = {1};
    r.comparison = CompareReports(*options.baseline, report, co);
    for (const auto& kc : r.comparison->ks()) {
      GateCheck c;
      c.name = fmt::format("no significant pass@{} regression vs baseline", kc.k());
      double p = DecisiveP(*r.comparison, kc.k());
      const bool significant = p >= 0 && p < options.alpha;
      bool regressed = kc.delta() < 0 && significant;
      c.passed = !regressed;
      c.message = fmt::format(
          "delta {:+.4f} (95% CI {:+.4f} to {:+.4f}), p = {:.4g}, {} better / {} worse, over {} "
          "problems both reports share",
          kc.delta(), kc.delta_ci95().low(), kc.delta_ci95().high(), p, kc.better(), kc.worse(),
          r.comparison->shared_problems());
      // A passed check is "no significant regression", never "no regression": say what this
      // evaluation could have seen — unless it saw a significant improvement.
      if (significant && kc.delta() > 0)
        c.message += "; a significant improvement over the baseline";
      else if (!regressed)
        c.message += fmt::format(
            "; not significant - minimum detectable effect at 80% power {} over problems like "
            "these, {} on this problem set",
            FormatMde(kc.mde()), FormatMde(kc.mde_this_problem_set()));
      if (r.comparison->lost_size() > 0) {
        c.message += "; lost:";
        for (const auto& name : r.comparison->lost()) c.message += " " + name;
      }
      r.passed &= c.passed;
      r.checks.push_back(std::move(c));
    }
    if (r.comparison->ks_size() == 0) {
      r.passed = false;
      r.checks.push_back({"no significant regression vs baseline", false,
                          "the report and the baseline share no problem"});
    }
  }
  if (r.checks.empty()) {
    r.passed = false;
    r.checks.push_back(
        {"configuration", false, "no threshold and no baseline: nothing to gate on"});
  }
  return r;
}

std::string GateJUnitXml(const v1::EvalReport& report, const GateResult& result) {
  std::map<std::string, std::string> letters, flips;
  for (const auto& s : report.samples()) letters[s.problem()] += s.verdict();
  if (result.comparison)
    for (const auto& d : result.comparison->problems()) flips[d.problem()] = d.flip();
  int failures = 0;
  for (const auto& c : result.checks) failures += c.passed ? 0 : 1;
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += fmt::format("<testsuites name=\"evald gate\" tests=\"{}\" failures=\"{}\">\n",
                   result.checks.size() + report.problems_size(), failures);
  x += fmt::format("  <testsuite name=\"gate\" tests=\"{}\" failures=\"{}\">\n",
                   result.checks.size(), failures);
  for (const auto& c : result.checks) {
    x += fmt::format("    <testcase classname=\"evald.gate\" name=\"{}\">", XmlEscape(c.name));
    if (!c.passed) {
      x += fmt::format("<failure message=\"{}\"/>", XmlEscape(c.message));
    } else {
      x += fmt::format("<system-out>{}</system-out>", XmlEscape(c.message));
    }
    x += "</testcase>\n";
  }
  x += "  </testsuite>\n";
  x += fmt::format("  <testsuite name=\"problems\" tests=\"{}\" failures=\"0\">\n",
                   report.problems_size());
  for (const auto& p : report.problems()) {
    std::string info = fmt::format("n={} c={}", p.n(), p.c());
    for (const auto& [k, v] : p.pass_at()) info += fmt::format(" pass@{}={:.4f}", k, v);
    info += " verdicts=" + letters[p.problem()];
    if (!flips[p.problem()].empty()) info += " vs baseline: " + flips[p.problem()];
    x += fmt::format(
        "    <testcase classname=\"evald.problems\" "
        "name=\"{}\"><system-out>{}</system-out></testcase>\n",
        XmlEscape(p.problem()), XmlEscape(info));
  }
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

std::string GateMarkdown(const v1::EvalReport& report, const GateResult& result) {
  std::string md = fmt::format("## evald gate: **{}**\n\n", result.Verdict());
  md += fmt::format("{} problems, {} samples, {} ({})\n\n", report.summary().problems(),
                    report.summary().samples(), MarkdownEscape(report.grading().simulator()),
                    MarkdownEscape(report.simulator_version()));
  md += "| check | result | figures |\n|---|---|---|\n";
  for (const auto& c : result.checks)
    md += fmt::format("| {} | {} | {} |\n", MarkdownEscape(c.name), c.passed ? "pass" : "**FAIL**",
                      MarkdownEscape(c.message));
  if (result.comparison) {
    const v1::Comparison& cmp = *result.comparison;
    md += fmt::format(
        "\nAgainst the baseline {}: {} problems both reports share ({} only in the "
        "baseline, {} only in the candidate).\n",
        MarkdownEscape(cmp.a()), cmp.shared_problems(), cmp.only_in_a_size(), cmp.only_in_b_size());
    md += "\n" + MarkdownEscape(result.comparison->conclusion()) + "\n";
    if (result.comparison->lost_size() || result.comparison->gained_size()) {
      md += "\n| problem | vs baseline |\n|---|---|\n";
      for (const auto& n : result.comparison->lost())
        md += fmt::format("| {} | lost |\n", MarkdownEscape(n));
      for (const auto& n : result.comparison->gained())
        md += fmt::format("| {} | gained |\n", MarkdownEscape(n));
    }
  }
  return md;
}

}  // namespace evald
