#include "evald/text/report_printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/file_io.h"
#include "base/text_escape.h"
#include "harness/failure_category.h"

namespace evald {

namespace {

// pass@k with its interval for each design category (fsm, sequential, ...), one line each.
void PrintCategoryScores(const v1::EvalReport& report, std::ostream& out) {
  const auto& scores = report.summary().by_category();
  if (scores.empty()) return;
  out << "by design category (95% CI over its problems):\n";
  std::map<std::string, v1::CategoryScore> sorted(scores.begin(), scores.end());
  for (const auto& [category, score] : sorted) {
    std::string line = fmt::format("  {:<14} {:>4} problems", category, score.problems());
    for (int k : report.k()) {
      const std::string key = std::to_string(k);
      auto v = score.pass_at().find(key);
      auto ci = score.ci95().find(key);
      if (v == score.pass_at().end() || ci == score.ci95().end()) continue;
      line += fmt::format("  pass@{} {:.4f} [{:.4f}, {:.4f}]", k, v->second, ci->second.low(),
                          ci->second.high());
    }
    out << line << "\n";
  }
}

}  // namespace

namespace {

// "benchmark verilog-eval-v1 1.0.0, task verilog-eval-v1-human: 156 problems (sha256 1a2b...)"
std::string BenchmarkLine(const v1::BenchmarkIdentity& b, const std::string& task) {
  return fmt::format("benchmark {} {}, task {}: {} problems (sha256 {})\n", b.name(), b.version(),
                     task, b.problems(), b.problems_sha256().substr(0, 12));
}

}  // namespace

void PrintEvalReport(const v1::EvalReport& report, std::ostream& out) {
  if (report.has_benchmark()) out << BenchmarkLine(report.benchmark(), report.task());
  std::vector<int> ks(report.k().begin(), report.k().end());
  // Verdict letters per problem in index order, grouped by five as sv-iv-analyze prints them.
  std::map<std::string, std::map<int, char>> letters;
  for (const auto& s : report.samples())
    letters[s.problem()][s.index()] = s.verdict().empty() ? '?' : s.verdict()[0];
  size_t width = 8;
  for (const auto& p : report.problems()) width = std::max(width, p.problem().size());

  std::string header = fmt::format("{:<{}} {:>4} {:>4}", "problem", width, "n", "c");
  for (int k : ks) header += fmt::format(" {:>7}", "pass@" + std::to_string(k));
  out << header << "  verdicts\n";
  for (const auto& p : report.problems()) {
    std::string row = fmt::format("{:<{}} {:>4} {:>4}", p.problem(), width, p.n(), p.c());
    for (int k : ks) {
      auto it = p.pass_at().find(std::to_string(k));
      row += it == p.pass_at().end() ? fmt::format(" {:>7}", "-")
                                     : fmt::format(" {:>7.3f}", it->second);
    }
    std::string v;
    int i = 0;
    for (const auto& [idx, letter] : letters[p.problem()]) {
      if (i && i % 5 == 0) v += ' ';
      v += letter;
      ++i;
    }
    std::string cross;
    if (p.formal_refuted() > 0) cross += fmt::format("  formal refutes {}", p.formal_refuted());
    if (p.formal_proven_failures() > 0)
      cross += fmt::format("  formal proves {} failure(s)", p.formal_proven_failures());
    out << row << "  " << v << (p.gradable() ? "" : "  (ungradable)") << cross << "\n";
  }
  const auto& s = report.summary();
  out << "\n"
      << fmt::format(
             "{} problems, {} samples, {} simulations, {} verdicts from the cache, {:.1f} s ({}, "
             "{})\n",
             s.problems(), s.samples(), s.simulations(), s.cache_hits(), s.wall_seconds(),
             report.grading().simulator(), report.simulator_version());
  for (int k : ks) {
    std::string key = std::to_string(k);
    auto it = s.pass_at().find(key);
    if (it == s.pass_at().end()) {
      out << fmt::format("pass@{:<3} = n/a (no problem has {} samples)\n", k, k);
      continue;
    }
    auto ci = s.ci95().find(key);
    out << fmt::format("pass@{:<3} = {:.4f}  95% CI [{:.4f}, {:.4f}]", k, it->second,
                       ci == s.ci95().end() ? 0.0 : ci->second.low(),
                       ci == s.ci95().end() ? 0.0 : ci->second.high());
    auto g = s.gradable_pass_at().find(key);
    if (g != s.gradable_pass_at().end() && s.gradable_problems() != s.problems())
      out << fmt::format("   (gradable problems only, {}: {:.4f})", s.gradable_problems(),
                         g->second);
    out << "\n";
  }
  PrintCategoryScores(report, out);
  out << fmt::format("benchmark pass_rate (verilog-eval's own analysis) = {:.2f}\n",
                     s.benchmark_pass_rate());
  std::string cats;
  for (const auto& [letter, count] : s.categories()) cats += fmt::format(" {}:{}", letter, count);
  out << "categories:" << cats << "\n";
  // What each letter in the table means, for the letters it holds.
  for (const auto& [letter, count] : s.categories())
    if (!letter.empty()) out << fmt::format("  {}  {}\n", letter, CategoryDescription(letter[0]));
  for (const auto& c : report.calibration()) {
    if (!c.note().empty())
      out << fmt::format("note: {}: {}\n", c.problem(), EscapeControl(c.note()));
  }
  if (report.input_errors_size() > 0) {
    out << fmt::format("{} input error(s):\n", report.input_errors_size());
    int shown = 0;
    for (const auto& e : report.input_errors()) {
      if (++shown > 20) {
        out << "  ...\n";
        break;
      }
      out << fmt::format("  line {}: {}\n", e.line(), EscapeControl(e.message()));
    }
  }
  if (report.grading().cross_checks().formal() || report.grading().cross_checks().synthesis())
    PrintCrossChecks(report, out);
  if (report.has_serving()) PrintServingMetrics(report.serving(), out);
  if (report.has_drift()) {
    const auto& d = report.drift();
    out << fmt::format("drift from {} (teacher-forced on {}):\n", d.base(), d.completions());
    for (const auto& v : d.variants()) PrintDriftVariant(v, out);
  }
}

void PrintDatasetAudit(const v1::DatasetAuditReport& report, std::ostream& out) {
  size_t width = 8;
  for (const auto& p : report.problems()) width = std::max(width, p.problem().size());
  out << fmt::format("{:<{}} {:>5} {:>7} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7}  self\n",
                     "problem", width, "mut", "invalid", "equiv", "bound", "differ", "caught",
                     "missed", "unknwn", "missed%");
  for (const auto& p : report.problems()) {
    if (!p.gradable()) {
      out << fmt::format("{:<{}} (ungradable: {})\n", p.problem(), width,
                         EscapeControl(p.note().substr(0, 100)));
      continue;
    }
    out << fmt::format("{:<{}} {:>5} {:>7} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6.0f}%  {}\n",
                       p.problem(), width, p.mutants(), p.invalid(), p.equivalent(), p.bounded(),
                       p.different(), p.caught(), p.missed(), p.unknown(), 100 * p.missed_share(),
                       p.self_check());
  }
  out << fmt::format(
      "\n{} mutants; {} formally different, of which the testbenches miss {} ({:.1f}%); {} "
      "problem(s) whose testbench misses at least one\n",
      report.mutants(), report.different(), report.missed(), 100 * report.missed_share(),
      report.weak_problems());
  for (const auto& p : report.problems())
    for (const auto& m : p.details())
      if (m.finding() == "missed")
        out << fmt::format("  missed: {} {} ({}): {}\n", p.problem(), m.description(), m.kind(),
                           EscapeControl(m.detail().substr(0, 160)));
}

void PrintCrossChecks(const v1::EvalReport& report, std::ostream& out) {
  const auto& s = report.summary();
  const auto& x = report.grading().cross_checks();
  if (x.formal()) {
    std::string outcomes;
    for (const auto& [name, n] : s.formal_outcomes()) outcomes += fmt::format(" {}:{}", name, n);
    out << fmt::format("formal ({} samples, K={} cycles, {} s budget, {}):{}\n",
                       x.formal_failures() ? "passing and failing" : "passing", x.bound_cycles(),
                       x.cpu_seconds(), x.yosys_version(), outcomes);
    out << fmt::format(
        "  simulation passes refuted by a replayed counterexample: {}; passes formal could not "
        "judge (unverified, not strict): {}; simulation failures proven equivalent: {}\n",
        s.formal_refuted(), s.formal_unverified(), s.formal_proven_failures());
    for (int k : report.k()) {
      const std::string key = std::to_string(k);
      auto it = s.strict_pass_at().find(key);
      auto ci = s.strict_ci95().find(key);
      if (it == s.strict_pass_at().end() || ci == s.strict_ci95().end()) continue;
      out << fmt::format("  strict pass@{:<3} = {:.4f}  95% CI [{:.4f}, {:.4f}]\n", k, it->second,
                         ci->second.low(), ci->second.high());
    }
    int shown = 0;
    for (const auto& r : report.samples()) {
      // Refutations and proven failures first: they say something is wrong.
      if (r.cross_check().empty() || r.cross_check() == "unverified" || ++shown > 20) continue;
      out << fmt::format("  {} #{} ({}): {}\n", r.problem(), r.index(), r.cross_check(),
                         EscapeControl(r.formal().detail().substr(0, 200)));
    }
  }
  if (x.synthesis() && s.synthesis().samples() > 0) {
    const auto& y = s.synthesis();
    out << fmt::format(
        "synthesis ({} passing samples): median {:.0f} cells, {:.1f} NAND2-eq area, depth "
        "{:.0f}; median ratio to the reference: area {:.2f}, cells {:.2f}, depth {:.2f}\n",
        y.samples(), y.median_cells(), y.median_area(), y.median_depth(), y.median_area_ratio(),
        y.median_cells_ratio(), y.median_depth_ratio());
  }
}

void PrintDatasetCheck(const v1::DatasetCheckReport& report, std::ostream& out) {
  size_t width = 8;
  for (const auto& p : report.problems()) width = std::max(width, p.problem().size());
  out << fmt::format("{:<{}} {:>8} {:>9} {:>8} {:>9}  note\n", "problem", width, "gradable",
                     "samples", "sim s", "simulator");
  for (const auto& p : report.problems()) {
    out << fmt::format("{:<{}} {:>8} {:>9} {:>8.3f} {:>9}  {}\n", p.problem(), width,
                       p.gradable() ? "yes" : "NO", p.samples_checked(), p.simulate_seconds(),
                       p.simulator(), EscapeControl(p.note()));
  }
  out << fmt::format(
      "\n{} problems: {} gradable ({} only with evald's TIMEOUT rule), {} ungradable "
      "({} {})\n",
      report.problems_size(), report.gradable(), report.special(), report.ungradable(),
      report.simulator(), report.simulator_version());
  if (report.has_benchmark()) out << BenchmarkLine(report.benchmark(), report.task());
}

namespace {

std::vector<std::pair<std::string, std::string>> ServingRows(const v1::ServingMetrics& m) {
  auto lat = [](const v1::LatencyStats& l) {
    return fmt::format("{:.1f} / {:.1f} / {:.1f}", l.mean_ms(), l.median_ms(), l.p99_ms());
  };
  bool streamed = m.streamed();
  return {
      {"backend", m.backend() + (m.hardware().empty() ? "" : " on " + m.hardware())},
      {"requests ok / failed / retries",
       fmt::format("{} / {} / {}", m.completed_requests(), m.failed_requests(), m.retries())},
      {"input / output tokens",
       fmt::format("{} / {}{}", m.total_input_tokens(), m.total_output_tokens(),
                   m.usage_reported() ? "" : " (some counted as chunks)")},
      {"duration (s)", fmt::format("{:.2f}", m.duration_s())},
      {"request throughput (req/s)", fmt::format("{:.3f}", m.request_throughput())},
      {"output throughput (tok/s)", fmt::format("{:.1f}", m.output_token_throughput())},
      {"TTFT mean/median/p99 (ms)", streamed ? lat(m.ttft()) : "- (not streamed)"},
      {"TPOT mean/median/p99 (ms)", streamed ? lat(m.tpot()) : "- (not streamed)"},
      {"ITL mean/median/p99 (ms)", streamed ? lat(m.itl()) : "- (not streamed)"},
      {"E2E mean/median/p99 (ms)", lat(m.e2e())},
      {"samples from stored generations", std::to_string(m.cached_samples())},
      {"prompt format", m.prompt_format().empty() ? "completions" : m.prompt_format()},
  };
}

}  // namespace

void PrintServingMetrics(const v1::ServingMetrics& m, std::ostream& out) {
  out << "serving (" << m.endpoint() << ")\n";
  for (const auto& [k, v] : ServingRows(m)) out << fmt::format("  {:<34} {}\n", k, v);
  for (const auto& e : m.per_endpoint())
    out << fmt::format(
        "  replica {}: {} requests, {:.1f} output tok/s, TTFT median {:.0f} ms, E2E median {:.0f} "
        "ms, "
        "{} failed attempts, taken out {} times\n",
        e.endpoint(), e.completed_requests(), e.output_token_throughput(), e.ttft().median_ms(),
        e.e2e().median_ms(), e.failed_attempts(), e.times_taken_out());
}

void PrintServingComparison(const v1::ServingMetrics& a, const v1::ServingMetrics& b,
                            std::ostream& out) {
  auto ra = ServingRows(a), rb = ServingRows(b);
  out << fmt::format("{:<34} {:<28} {}\n", "serving", "A", "B");
  for (size_t i = 0; i < ra.size(); ++i)
    out << fmt::format("{:<34} {:<28} {}\n", ra[i].first, ra[i].second, rb[i].second);
}

void PrintDriftVariant(const v1::DriftVariant& v, std::ostream& out) {
  const auto& o = v.overall();
  out << fmt::format(
      "{}: {} tokens over {} problems\n  mean KL {:.6f} [{:.6f}, {:.6f}]  p99 KL {:.6f}  top-1 "
      "agreement {:.4f} [{:.4f}, {:.4f}]  delta-p RMS {:.4f}  PPL ratio {:.4f}\n",
      v.file(), o.tokens(), v.problems_size(), o.mean_kl(), v.mean_kl_ci95().low(),
      v.mean_kl_ci95().high(), o.p99_kl(), o.top1_agreement(), v.top1_ci95().low(),
      v.top1_ci95().high(), o.dp_rms(), o.ppl_ratio());
  std::map<std::string, v1::DriftFigures> sorted(v.by_category().begin(), v.by_category().end());
  for (const auto& [category, f] : sorted)
    out << fmt::format("  {:<14} {:>6} tokens  mean KL {:.6f}  top-1 {:.4f}  PPL ratio {:.4f}\n",
                       category, f.tokens(), f.mean_kl(), f.top1_agreement(), f.ppl_ratio());
  out << "  problem (most drift first): mean KL, top-1 agreement\n";
  std::vector<const v1::ProblemDrift*> problems;
  for (const auto& p : v.problems()) problems.push_back(&p);
  std::sort(problems.begin(), problems.end(), [](const auto* a, const auto* b) {
    return a->figures().mean_kl() > b->figures().mean_kl();
  });
  for (size_t i = 0; i < problems.size() && i < 10; ++i)
    out << fmt::format("    {:<32} {:.6f}  {:.4f}\n", problems[i]->problem(),
                       problems[i]->figures().mean_kl(), problems[i]->figures().top1_agreement());
}

}  // namespace evald
