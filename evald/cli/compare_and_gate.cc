#include "evald/cli/compare_and_gate.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <memory>

#include "base/file_io.h"
#include "evald/cli/report_io.h"
#include "evald/gate/ci_gate.h"
#include "evald/metrics/run_comparison.h"
#include "evald/proto/json.h"
#include "evald/runs/scoring.h"
#include "evald/store/store.h"
#include "evald/text/report_printer.h"

namespace evald {

namespace {

void PrintComparison(const v1::Comparison& c, std::ostream& out) {
  out << fmt::format("A = {}\nB = {}\n{} shared problems", c.a(), c.b(), c.shared_problems());
  if (c.only_in_a_size() || c.only_in_b_size())
    out << fmt::format(" ({} only in A, {} only in B, left out)", c.only_in_a_size(),
                       c.only_in_b_size());
  out << "\n\n";
  out << fmt::format("{:<8} {:>8} {:>8} {:>9} {:>22} {:>5} {:>5} {:>5} {:>10} {:>10} {:>8} {:>8}\n",
                     "metric", "A", "B", "delta", "95% CI (paired)", "B>A", "B<A", "tie", "sign p",
                     "perm p", "MDE80", "MDE80set");
  for (const auto& k : c.ks()) {
    out << fmt::format(
        "pass@{:<3} {:>8.4f} {:>8.4f} {:>+9.4f} {:>22} {:>5} {:>5} {:>5} {:>10.4g} {:>10} {:>8} "
        "{:>8}\n",
        k.k(), k.a(), k.b(), k.delta(),
        fmt::format("[{:+.4f}, {:+.4f}]", k.delta_ci95().low(), k.delta_ci95().high()), k.better(),
        k.worse(), k.ties(), k.sign_test_p(),
        k.permutation_p() >= 0 ? fmt::format("{:.4g}", k.permutation_p()) : "-", FormatMde(k.mde()),
        FormatMde(k.mde_this_problem_set()));
  }
  out << "MDE80: the |delta| detected with 80% power over problems like these; MDE80set: with "
         "the problems held fixed (pass@1)\n";
  auto list = [&](const char* what, const auto& names) {
    if (names.empty()) return;
    out << what << " (" << names.size() << "):";
    for (const auto& n : names) out << " " << n;
    out << "\n";
  };
  out << "\n";
  list("gained by B (A never passes)", c.gained());
  list("lost by B (B never passes)", c.lost());
  out << c.conclusion() << "\n";
  if (c.has_a_serving() || c.has_b_serving()) {
    out << "\n";
    PrintServingComparison(c.a_serving(), c.b_serving(), out);
  }
  for (const auto* s : {&c.a_synthesis(), &c.b_synthesis()}) {
    if (s->samples() == 0) continue;
    out << fmt::format(
        "synthesis {}: median {:.0f} cells, area {:.1f} NAND2-eq, depth {:.0f}; ratio to the "
        "reference: area {:.2f}, cells {:.2f}, depth {:.2f} ({} passing samples)\n",
        s == &c.a_synthesis() ? "A" : "B", s->median_cells(), s->median_area(), s->median_depth(),
        s->median_area_ratio(), s->median_cells_ratio(), s->median_depth_ratio(), s->samples());
  }
}

}  // namespace

namespace {

void AddMetricOption(CLI::App* cmd, std::string* metric) {
  cmd->add_option("--metric", *metric,
                  "simulation (the benchmark's rule) | strict (only passes formal proved or "
                  "bounded count) | unverified (only passes formal could not judge); strict and "
                  "unverified need reports graded with --formal");
}

// --data STORE or --server URL [--token T] (default: $EVALD_TOKEN): where run ids are read.
void AddReportSourceOptions(CLI::App* cmd, ReportSource* source) {
  cmd->add_option("--data", source->data_dir,
                  "daemon store to read run ids from (also while the daemon runs)");
  cmd->add_option("--server", source->server,
                  "a running daemon to read run ids from (http://HOST:PORT)");
  cmd->add_option("--token", source->token, "--server: a read token (default: $EVALD_TOKEN)")
      ->envname("EVALD_TOKEN");
}

StatusOr<v1::EvalReport> LoadReportFor(const std::string& what, const ReportSource& source,
                                       const std::string& metric) {
  auto report = LoadReport(what, source);
  if (!report.ok()) return report.status();
  return ReportForMetric(std::move(*report), metric);
}

}  // namespace

void RegisterCompareCommand(CLI::App& app, std::function<int()>* run) {
  struct Flags {
    std::string a, b, json, ks = "1,5", metric = "simulation";
    ReportSource source;
    double alpha = 0.05;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand("compare", "compare two evaluation reports problem by problem");
  cmd->add_option("A", f->a,
                  "run A (the reference side): a report JSON, or a run id with --data/--server")
      ->required();
  cmd->add_option("B", f->b, "run B: a report JSON, or a run id with --data/--server")->required();
  AddReportSourceOptions(cmd, &f->source);
  cmd->add_option("--k", f->ks, "pass@k values, comma separated");
  cmd->add_option("--alpha", f->alpha, "significance level")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--json", f->json, "write the comparison as JSON");
  AddMetricOption(cmd, &f->metric);
  cmd->callback([cmd, f, run] {
    *run = [f]() -> int {
      auto ks = ParseKList(f->ks);
      auto a = LoadReportFor(f->a, f->source, f->metric);
      auto b = LoadReportFor(f->b, f->source, f->metric);
      for (const Status& st : {ks.status(), a.status(), b.status()}) {
        if (!st.ok()) return Fail(st);
      }
      if (Status same = SameProblemSet(*a, *b); !same.ok()) return Fail(same);
      CompareOptions opts;
      opts.ks = *ks;
      opts.alpha = f->alpha;
      opts.label_a = f->a;
      opts.label_b = f->b;
      v1::Comparison c = CompareReports(*a, *b, opts);
      c.set_metric(f->metric);
      if (f->metric != "simulation") std::cout << "metric: " << f->metric << "\n";
      PrintComparison(c, std::cout);
      if (!f->json.empty()) {
        Status st = WriteJson(c, f->json);
        if (!st.ok()) return Fail(st);
      }
      return 0;
    };
    (void)cmd;
  });
}

void RegisterGateCommand(CLI::App& app, std::function<int()>* run) {
  struct Flags {
    std::string report, baseline, thresholds, junit, markdown, metric = "simulation";
    ReportSource source;
    double alpha = 0.05;
    std::optional<double> max_unverified;
    bool strict = false;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "gate", "pass or fail a CI job on a report: exit 0 pass, 1 gate failed, 2 error");
  cmd->add_option("--report", f->report,
                  "the candidate: a report JSON, or a run id with --data/--server")
      ->required();
  AddReportSourceOptions(cmd, &f->source);
  cmd->add_option("--min", f->thresholds, "thresholds, e.g. pass@1>=0.45,pass@5>=0.6");
  cmd->add_option("--baseline", f->baseline,
                  "fail on a significant regression against this report");
  cmd->add_option("--alpha", f->alpha, "significance level for the regression check")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--max-unverified", f->max_unverified,
                  "fail when more than this share of the passes (0-1) are unverified: formal "
                  "could not judge them (needs reports graded with --formal)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--strict", f->strict,
                "fail when the report has input errors (sample lines that were not graded)");
  cmd->add_option("--junit", f->junit, "write JUnit XML");
  cmd->add_option("--markdown", f->markdown, "write a Markdown summary");
  AddMetricOption(cmd, &f->metric);
  cmd->callback([f, run] {
    *run = [f]() -> int {
      auto fail = [](const Status& st) {
        spdlog::error("{}", st.ToString());
        std::cout << "gate: ERROR\n";
        return 2;
      };
      auto report = LoadReportFor(f->report, f->source, f->metric);
      if (!report.ok()) return fail(report.status());
      GateOptions opts;
      opts.alpha = f->alpha;
      opts.max_unverified = f->max_unverified;
      opts.strict = f->strict;
      if (!f->thresholds.empty()) {
        auto t = ParseThresholds(f->thresholds);
        if (!t.ok()) return fail(t.status());
        opts.thresholds = *t;
      }
      std::optional<v1::EvalReport> baseline;
      if (!f->baseline.empty()) {
        auto b = LoadReportFor(f->baseline, f->source, f->metric);
        if (!b.ok()) return fail(b.status());
        if (Status same = SameProblemSet(*b, *report); !same.ok()) return fail(same);
        baseline = std::move(*b);
        opts.baseline = &*baseline;
        opts.baseline_name = f->baseline;
      }
      if (opts.thresholds.empty() && !opts.baseline && !opts.max_unverified && !opts.strict)
        return fail(
            Status::InvalidArgument("give --min, --baseline, --max-unverified and/or --strict"));
      GateResult result = EvaluateGate(*report, opts);
      if (!f->junit.empty()) {
        Status st = WriteFileAtomic(f->junit, GateJUnitXml(*report, result));
        if (!st.ok()) return fail(st);
      }
      if (!f->markdown.empty()) {
        Status st = WriteFileAtomic(f->markdown, GateMarkdown(*report, result));
        if (!st.ok()) return fail(st);
      }
      for (const auto& c : result.checks)
        std::cout << fmt::format("  [{}] {}: {}\n", c.passed ? "pass" : "FAIL", c.name, c.message);
      if (result.comparison) std::cout << "  " << result.comparison->conclusion() << "\n";
      std::cout << "gate: " << result.Verdict() << "\n";
      return result.passed ? 0 : 1;
    };
  });
}

}  // namespace evald
