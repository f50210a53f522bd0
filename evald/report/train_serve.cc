#include "evald/report/train_serve.h"

#include <fmt/format.h>

#include <filesystem>

#include <algorithm>
#include <set>

#include "base/text_escape.h"
#include "evald/metrics/run_comparison.h"
#include "evald/proto/json.h"
#include "evald/report/report_values.h"

namespace evald {

namespace {

const char* const kCategoryRules =
    "fsm: the name says fsm or lemmings, or the reference is clocked with a case over its state; "
    "sequential: the reference is clocked (posedge/negedge); arithmetic: +, - or * outside bit "
    "selects; combinational: the rest (datasets/problem_category.h)";

std::vector<v1::CategoryAccuracy> CategoriesOf(const v1::EvalReport& report,
                                               const std::map<std::string, std::string>& cats) {
  std::map<std::string, std::pair<int, double>> by;  // category -> (problems, sum pass@1)
  for (const auto& p : report.problems()) {
    if (p.n() <= 0) continue;
    auto it = cats.find(p.problem());
    auto& slot = by[it == cats.end() ? "other" : it->second];
    ++slot.first;
    slot.second += static_cast<double>(p.c()) / p.n();
  }
  std::vector<v1::CategoryAccuracy> out;
  for (const auto& [name, v] : by) {
    v1::CategoryAccuracy c;
    c.set_category(name);
    c.set_problems(v.first);
    c.set_pass_at_1(v.second / v.first);
    out.push_back(c);
  }
  return out;
}

void AddDeltas(const v1::EvalReport& base, const v1::EvalReport& r, const std::vector<int>& ks,
               v1::ServeVariant* v) {
  CompareOptions o;
  o.ks = ks;
  const v1::Comparison c = CompareReports(base, r, o);
  for (const auto& kc : c.ks()) {
    const std::string key = std::to_string(kc.k());
    (*v->mutable_delta())[key] = kc.delta();
    (*v->mutable_delta_ci95())[key] = kc.delta_ci95();
    (*v->mutable_delta_p())[key] = DecisiveP(c, kc.k());
  }
}

}  // namespace

StatusOr<v1::TrainServeReport> BuildTrainServeReport(
    const std::vector<ServeRun>& runs, size_t baseline,
    const std::map<std::string, std::string>& categories, const std::string& title) {
  if (runs.empty()) return Status::InvalidArgument("no run to report on");
  if (baseline >= runs.size())
    return Status::InvalidArgument("the baseline is not one of the runs");
  for (const auto& r : runs) {
    Status same = SameProblemSet(runs[baseline].report, r.report);
    if (!same.ok()) return same.Annotate("run " + r.run + " against the baseline");
  }
  v1::TrainServeReport out;
  out.set_title(title);
  out.set_baseline(runs[baseline].run);
  out.set_category_rules(kCategoryRules);
  std::set<int> kset;
  for (const auto& r : runs)
    for (int k : r.report.k()) kset.insert(k);
  if (kset.empty()) kset = {1, 5};
  std::vector<int> ks(kset.begin(), kset.end());
  for (int k : ks) out.add_k(k);
  std::set<std::string> cats;
  for (size_t i = 0; i < runs.size(); ++i) {
    const ServeRun& r = runs[i];
    v1::ServeVariant* v = out.add_variants();
    v->set_run(r.run);
    v->set_name(r.name);
    v->mutable_labels()->insert(r.labels.begin(), r.labels.end());
    v->set_baseline(i == baseline);
    v->set_problems(r.report.summary().problems());
    v->set_samples(r.report.summary().samples());
    *v->mutable_pass_at() = r.report.summary().pass_at();
    *v->mutable_ci95() = r.report.summary().ci95();
    if (i != baseline) AddDeltas(runs[baseline].report, r.report, ks, v);
    for (auto& c : CategoriesOf(r.report, categories)) {
      cats.insert(c.category());
      *v->add_categories() = std::move(c);
    }
    if (r.report.has_serving()) *v->mutable_serving() = r.report.serving();
  }
  for (const auto& c : cats) out.add_categories(c);
  AttachRunDrift(runs, &out);
  return out;
}

namespace {

std::string Num(double v) {
  return fmt::format("{:.4f}", v);
}

std::string RenderMarkdown(const v1::TrainServeReport& r) {
  std::string out = "# " + MarkdownEscape(r.title()) + "\n\n| variant | baseline |";
  for (int k : r.k()) out += fmt::format(" pass@{} (95% CI) | delta pass@{} (95% CI, p) |", k, k);
  out += "\n|---|---|";
  for (int i = 0; i < r.k_size(); ++i) out += "---|---|";
  out += "\n";
  for (const auto& v : r.variants()) {
    out += fmt::format("| {} | {} |", MarkdownEscape(v.name()), v.baseline() ? "yes" : "");
    for (int k : r.k()) {
      const std::string key = std::to_string(k);
      auto ci = v.ci95().find(key);
      out += ValueAt(v.pass_at(), k) < 0
                 ? fmt::format(" {} |", kNoValue)
                 : fmt::format(" {} ({}-{}) |", Num(ValueAt(v.pass_at(), k)),
                               ci == v.ci95().end() ? "" : Num(ci->second.low()),
                               ci == v.ci95().end() ? "" : Num(ci->second.high()));
      auto d = v.delta().find(key);
      out += d == v.delta().end() ? fmt::format(" {} |", kNoValue)
                                  : fmt::format(" {:+.4f} ({:+.4f} to {:+.4f}, p {:.3g}) |",
                                                d->second, v.delta_ci95().at(key).low(),
                                                v.delta_ci95().at(key).high(), v.delta_p().at(key));
    }
    out += "\n";
  }
  out += "\n## pass@1 by category\n\n| variant |";
  for (const auto& c : r.categories()) out += " " + MarkdownEscape(c) + " |";
  out += "\n|---|";
  for (int i = 0; i < r.categories_size(); ++i) out += "---|";
  out += "\n";
  for (const auto& v : r.variants()) {
    out += "| " + MarkdownEscape(v.name()) + " |";
    for (const auto& c : r.categories()) {
      const v1::CategoryAccuracy* a = FindCategory(v, c);
      out += a ? fmt::format(" {} ({}) |", Num(a->pass_at_1()), a->problems())
               : fmt::format(" {} |", kNoValue);
    }
    out += "\n";
  }
  out += "\n## Serving\n\n| variant |";
  for (const auto& f : ServingFigures()) out += fmt::format(" {} |", f.label);
  out += "\n|---|";
  for (size_t i = 0; i < ServingFigures().size(); ++i) out += "---|";
  out += "\n";
  for (const auto& v : r.variants()) {
    out += "| " + MarkdownEscape(v.name()) + " |";
    for (const auto& f : ServingFigures()) {
      const auto value = FigureOf(f, v);
      out += value ? " " + fmt::format(fmt::runtime(f.format), *value) + " |"
                   : fmt::format(" {} |", kNoValue);
    }
    out += "\n";
  }
  if (!r.drift_base().empty()) {
    out += "\n## Drift from " + MarkdownEscape(r.drift_base()) +
           " (teacher-forced, evald drift)\n\n| variant | mean KL | p99 KL | top-1 agreement | "
           "delta-p RMS | PPL ratio |\n|---|---|---|---|---|---|\n";
    for (const auto& v : r.variants()) {
      out += "| " + MarkdownEscape(v.name()) + " |";
      if (!v.has_drift()) {
        for (int i = 0; i < 5; ++i) out += fmt::format(" {} |", kNoValue);
      } else {
        const auto& d = v.drift();
        out += fmt::format(" {:.6f} | {:.6f} | {:.4f} | {:.4f} | {:.4f} |", d.mean_kl(), d.p99_kl(),
                           d.top1_agreement(), d.dp_rms(), d.ppl_ratio());
      }
      out += "\n";
    }
  }
  return out + "\nCategories: " + MarkdownEscape(r.category_rules()) + "\n";
}

}  // namespace

namespace {

bool Timed(const v1::ServingMetrics& s) {
  return s.completed_requests() > 0;
}
bool Streamed(const v1::ServingMetrics& s) {
  return Timed(s) && s.streamed();
}
bool SecondTokens(const v1::ServingMetrics& s) {
  return Timed(s) && s.total_output_tokens() > s.completed_requests();
}
bool Throughput(const v1::ServingMetrics& s) {
  return Timed(s) && s.duration_s() > 0;
}

}  // namespace

const std::vector<ServingFigure>& ServingFigures() {
  static const std::vector<ServingFigure> figures = {
      {"TTFT median (ms)", [](const v1::ServingMetrics& s) { return s.ttft().median_ms(); },
       "{:.1f}", &Streamed},
      {"TTFT p99 (ms)", [](const v1::ServingMetrics& s) { return s.ttft().p99_ms(); }, "{:.1f}",
       &Streamed},
      {"TPOT median (ms)", [](const v1::ServingMetrics& s) { return s.tpot().median_ms(); },
       "{:.2f}", &SecondTokens},
      {"ITL median (ms)", [](const v1::ServingMetrics& s) { return s.itl().median_ms(); }, "{:.2f}",
       &Streamed},
      {"ITL p99 (ms)", [](const v1::ServingMetrics& s) { return s.itl().p99_ms(); }, "{:.2f}",
       &Streamed},
      {"E2E p99 (ms)", [](const v1::ServingMetrics& s) { return s.e2e().p99_ms(); }, "{:.1f}",
       &Timed},
      {"output tokens/s", [](const v1::ServingMetrics& s) { return s.output_token_throughput(); },
       "{:.1f}", &Throughput}};
  return figures;
}

std::optional<double> FigureOf(const ServingFigure& figure, const v1::ServeVariant& variant) {
  if (!variant.has_serving() || !figure.measured(variant.serving())) return std::nullopt;
  return figure.get(variant.serving());
}

double ValueAt(const google::protobuf::Map<std::string, double>& values, int k) {
  auto it = values.find(std::to_string(k));
  return it == values.end() ? -1 : it->second;
}

const v1::CategoryAccuracy* FindCategory(const v1::ServeVariant& v, const std::string& name) {
  for (const auto& c : v.categories())
    if (c.category() == name) return &c;
  return nullptr;
}

std::string RenderTrainServeHtml(const v1::TrainServeReport& report);

StatusOr<std::string> RenderTrainServeReport(const v1::TrainServeReport& report,
                                             std::string_view format) {
  if (format == "json") return ToJson(report, /*pretty=*/true);
  if (format == "markdown" || format == "md") return RenderMarkdown(report);
  if (format == "html") return RenderTrainServeHtml(report);
  return Status::InvalidArgument("unknown report format '" + std::string(format) +
                                 "' (json, markdown, html)");
}

namespace {

std::string FileName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

bool SameFile(const std::string& a, const std::string& b) {
  return !a.empty() && !b.empty() && (a == b || FileName(a) == FileName(b));
}

}  // namespace

int AttachRunDrift(const std::vector<ServeRun>& runs, v1::TrainServeReport* report) {
  const v1::DriftReport* first = nullptr;
  for (const ServeRun& r : runs)
    if (r.report.has_drift() && r.report.drift().variants_size() == 1) {
      first = &r.report.drift();
      break;
    }
  if (first == nullptr) return 0;
  v1::DriftReport base_only;  // the base file's own run, when one is among them: no drift
  base_only.set_base(first->base());
  int matched = AttachDrift(base_only, report);
  for (size_t i = 0; i < runs.size() && i < static_cast<size_t>(report->variants_size()); ++i) {
    const v1::EvalReport& r = runs[i].report;
    if (!r.has_drift() || r.drift().base() != first->base() || r.drift().variants_size() != 1)
      continue;
    *report->mutable_variants(static_cast<int>(i))->mutable_drift() =
        r.drift().variants(0).overall();
    ++matched;
  }
  return matched;
}

int AttachDrift(const v1::DriftReport& drift, v1::TrainServeReport* report) {
  report->set_drift_base(drift.base());
  int matched = 0;
  for (auto& v : *report->mutable_variants()) {
    if (!v.has_serving()) continue;
    const std::string& file = v.serving().endpoint();
    if (SameFile(file, drift.base())) {
      v.mutable_drift()->set_top1_agreement(1);
      v.mutable_drift()->set_ppl_ratio(1);
      ++matched;
      continue;
    }
    for (const auto& d : drift.variants())
      if (SameFile(file, d.file())) {
        *v.mutable_drift() = d.overall();
        ++matched;
        break;
      }
  }
  return matched;
}

}  // namespace evald
