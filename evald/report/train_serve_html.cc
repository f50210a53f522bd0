// The train-vs-serve report as one self-contained HTML page: tables whose every number carries
// data-variant / data-metric attributes (the headless-Chromium test reads them back and checks
// them against the JSON), and plots drawn as inline SVG. No script, nothing fetched.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "base/text_escape.h"
#include "evald/report/report_values.h"
#include "evald/report/train_serve.h"

namespace evald {

namespace {

const char* const kColors[] = {"#1565c0", "#c62828", "#2e7d32", "#ef6c00",
                               "#6a1b9a", "#00838f", "#5d4037", "#455a64"};

const char* Color(int i) {
  return kColors[i % 8];
}

// An inline SVG that scales with the page (its coordinates are viewBox units), up to the width
// the style sheet allows.
std::string SvgOpen(const std::string& id, int width, int height, const std::string& label) {
  return fmt::format(
      "<svg class=\"plot\" data-plot=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" "
      "viewBox=\"0 0 {} {}\" width=\"100%\" preserveAspectRatio=\"xMinYMin meet\" role=\"img\" "
      "aria-label=\"{}\">",
      XmlEscape(id), width, height, XmlEscape(label));
}

// Room for the longest variant name at 12px (about 7 units a character), whole names shown.
int LabelWidth(const v1::TrainServeReport& r) {
  size_t longest = 8;
  for (const auto& v : r.variants()) longest = std::max(longest, v.name().size());
  return static_cast<int>(std::min<size_t>(longest, 64) * 7 + 16);
}

std::string NoValueCell() {
  return std::string("<td>") + kNoValue + "</td>";
}

std::string Cell(int variant, const std::string& metric, double value, const char* format) {
  return fmt::format("<td data-variant=\"{}\" data-metric=\"{}\" data-v=\"{:.6f}\">{}</td>",
                     variant, XmlEscape(metric), value, fmt::format(fmt::runtime(format), value));
}

std::string AccuracyTable(const v1::TrainServeReport& r) {
  std::string out = "<table id=\"accuracy\"><thead><tr><th>variant</th><th>run</th>";
  for (int k : r.k())
    out += fmt::format(
        "<th>pass@{}</th><th>95% CI</th><th>delta pass@{}</th><th>delta 95% CI</th>"
        "<th>p</th>",
        k, k);
  const bool drift = !r.drift_base().empty();
  if (drift) out += "<th>mean KL from the base file</th><th>top-1 agreement</th>";
  out += "</tr></thead><tbody>\n";
  for (int i = 0; i < r.variants_size(); ++i) {
    const auto& v = r.variants(i);
    out += fmt::format("<tr><th style=\"color:{}\">{}{}</th><td>{}</td>", Color(i),
                       XmlEscape(v.name()), v.baseline() ? " (baseline)" : "", XmlEscape(v.run()));
    for (int k : r.k()) {
      const std::string key = std::to_string(k);
      const double value = ValueAt(v.pass_at(), k);
      out += value < 0 ? NoValueCell() : Cell(i, "pass@" + key, value, "{:.4f}");
      auto ci = v.ci95().find(key);
      out += ci == v.ci95().end()
                 ? NoValueCell()
                 : fmt::format("<td>{:.4f}-{:.4f}</td>", ci->second.low(), ci->second.high());
      auto d = v.delta().find(key);
      if (d == v.delta().end()) {
        out += NoValueCell() + NoValueCell() + NoValueCell();
        continue;
      }
      out += Cell(i, "delta@" + key, d->second, "{:+.4f}");
      out += fmt::format("<td>{:+.4f} to {:+.4f}</td>", v.delta_ci95().at(key).low(),
                         v.delta_ci95().at(key).high());
      out += Cell(i, "p@" + key, v.delta_p().at(key), "{:.3g}");
    }
    if (drift && v.has_drift())
      out += Cell(i, "drift:mean_kl", v.drift().mean_kl(), "{:.6f}") +
             Cell(i, "drift:top1", v.drift().top1_agreement(), "{:.4f}");
    else if (drift)
      out += NoValueCell() + NoValueCell();
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

// pass@k of every variant: a dot at the value, a whisker over its 95% interval, on 0..1.
std::string AccuracyPlot(const v1::TrainServeReport& r, int k) {
  const int left = LabelWidth(r), width = 640, row = 26, top = 26;
  const int height = r.variants_size() * row + top + 30;
  auto x = [&](double v) { return left + v * width; };
  std::string svg = SvgOpen(fmt::format("pass@{}", k), left + width + 40, height,
                            fmt::format("pass@{} with 95% intervals", k));
  svg += fmt::format(
      "<text x=\"0\" y=\"14\" font-size=\"12\" font-weight=\"bold\">pass@{} "
      "(95% interval)</text>",
      k);
  for (int t = 0; t <= 4; ++t) {
    const double v = t / 4.0;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{4}\" x2=\"{0:.1f}\" y2=\"{1}\" stroke=\"#e0e0e0\"/>"
        "<text x=\"{0:.1f}\" y=\"{2}\" font-size=\"11\" text-anchor=\"middle\">{3:.2f}</text>",
        x(v), height - 20, height - 6, v, top - 6);
  }
  for (int i = 0; i < r.variants_size(); ++i) {
    const auto& v = r.variants(i);
    const double value = ValueAt(v.pass_at(), k);
    if (value < 0) continue;
    const int y = top + 8 + i * row;
    auto ci = v.ci95().find(std::to_string(k));
    svg += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\" fill=\"{}\">{}</text>",
        left - 8, y + 4, Color(i), XmlEscape(v.name()));
    if (ci != v.ci95().end())
      svg += fmt::format(
          "<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"{}\" "
          "stroke-width=\"2\"/>",
          x(ci->second.low()), y, x(ci->second.high()), y, Color(i));
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{}\" r=\"5\" fill=\"{}\"><title>{}: {:.4f}</title>"
        "</circle>",
        x(value), y, Color(i), XmlEscape(v.name()), value);
  }
  return svg + "</svg>\n";
}

// Whether variant i is on the Pareto front of (pass@1 higher, figure better): no other variant
// is at least as good on both and better on one.
bool OnParetoFront(size_t i, const std::vector<std::pair<double, double>>& points,
                   bool lower_is_better) {
  auto better_or_equal = [&](double a, double b) { return lower_is_better ? a <= b : a >= b; };
  for (size_t j = 0; j < points.size(); ++j) {
    if (j == i) continue;
    const bool no_worse =
        points[j].second >= points[i].second && better_or_equal(points[j].first, points[i].first);
    const bool better = points[j].second > points[i].second || points[j].first != points[i].first;
    if (no_worse && better) return false;
  }
  return true;
}

// pass@1 (with its interval) against a serving figure, one labelled point per variant that has
// both; the Pareto front drawn through the variants no other beats on both.
std::string Scatter(const v1::TrainServeReport& r, const ServingFigure& figure,
                    bool lower_is_better) {
  std::vector<int> shown;
  std::vector<std::pair<double, double>> points;  // (figure, pass@1)
  std::string missing;
  for (int i = 0; i < r.variants_size(); ++i) {
    const auto value = FigureOf(figure, r.variants(i));
    const double pass = ValueAt(r.variants(i).pass_at(), 1);
    if (!value || pass < 0) {
      missing += (missing.empty() ? "" : ", ") + XmlEscape(r.variants(i).name());
      continue;
    }
    shown.push_back(i);
    points.emplace_back(*value, pass);
  }
  const std::string id = std::string("pass@1 vs ") + figure.label;
  if (points.empty()) return "<p>" + XmlEscape(id) + ": no variant has both.</p>\n";
  double top = 0;
  for (const auto& p : points) top = std::max(top, p.first);
  top = top > 0 ? top * 1.15 : 1;
  const int left = 50, width = 640, height = 320, bottom = 40;
  auto x = [&](double v) { return left + v / top * width; };
  auto y = [&](double p) { return 10 + (1 - p) * (height - bottom - 10); };
  std::string svg = SvgOpen(id, left + width + 200, height, id);
  for (int t = 0; t <= 4; ++t) {
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eeeeee\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" font-size=\"11\" text-anchor=\"end\">{5:.2f}</text>"
        "<text x=\"{6:.1f}\" y=\"{7}\" font-size=\"11\" text-anchor=\"middle\">{8}</text>",
        left, y(t / 4.0), left + width, left - 6, y(t / 4.0) + 4, t / 4.0, x(top * t / 4),
        height - bottom + 16, fmt::format(fmt::runtime(figure.format), top * t / 4));
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"12\" font-weight=\"bold\">{} ({} is better); "
      "pass@1 with its 95% interval; dashed: the Pareto front</text>",
      left, height - 4, XmlEscape(figure.label), lower_is_better ? "lower" : "higher");
  std::vector<std::pair<double, double>> front;
  for (size_t n = 0; n < shown.size(); ++n) {
    const int i = shown[n];
    const auto& v = r.variants(i);
    const bool pareto = OnParetoFront(n, points, lower_is_better);
    if (pareto) front.push_back(points[n]);
    auto ci = v.ci95().find("1");
    if (ci != v.ci95().end())
      svg += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" "
          "stroke-width=\"2\"/>",
          x(points[n].first), y(ci->second.low()), y(ci->second.high()), Color(i));
    svg += fmt::format(
        "<circle data-variant=\"{}\" data-pareto=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"6\" "
        "fill=\"{}\"><title>{}: pass@1 {:.4f}, {} {}</title></circle>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" fill=\"{}\">{}</text>",
        i, pareto ? 1 : 0, x(points[n].first), y(points[n].second), Color(i), XmlEscape(v.name()),
        points[n].second, XmlEscape(figure.label),
        fmt::format(fmt::runtime(figure.format), points[n].first), x(points[n].first) + 9,
        // Alternately above and below the point, so that neighbours' names do not overprint.
        y(points[n].second) + (n % 2 == 0 ? -8 : 16), Color(i), XmlEscape(v.name()));
  }
  std::sort(front.begin(), front.end());
  std::string polyline;
  for (const auto& p : front) polyline += fmt::format("{:.1f},{:.1f} ", x(p.first), y(p.second));
  if (front.size() > 1)
    svg += "<polyline points=\"" + polyline +
           "\" fill=\"none\" stroke=\"#616161\" stroke-dasharray=\"5,4\"/>";
  svg += "</svg>\n";
  if (!missing.empty())
    svg +=
        "<p><small>Not plotted (no " + XmlEscape(figure.label) + "): " + missing + "</small></p>\n";
  return svg;
}

std::string TradeOffSection(const v1::TrainServeReport& r) {
  std::string out;
  for (const auto& f : ServingFigures()) {
    const std::string label = f.label;
    if (label == "E2E p99 (ms)") out += Scatter(r, f, /*lower_is_better=*/true);
    if (label == "output tokens/s") out += Scatter(r, f, /*lower_is_better=*/false);
  }
  return out;
}

// Horizontal bars, one group per label, one bar per variant (named at its left), scaled to the
// largest value.
std::string BarPlot(const std::string& id, const std::vector<std::string>& groups,
                    const std::vector<std::vector<double>>& values,  // [group][variant], < 0: none
                    const v1::TrainServeReport& r, const char* format) {
  double top = 0;
  for (const auto& g : values)
    for (double v : g) top = std::max(top, v);
  if (top <= 0) top = 1;
  const int left = LabelWidth(r), width = 560, bar = 14;
  const int group_h = r.variants_size() * (bar + 3) + 22;
  const int height = static_cast<int>(groups.size()) * group_h + 10;
  std::string svg = SvgOpen(id, left + width + 90, height, id);
  for (size_t g = 0; g < groups.size(); ++g) {
    const int y0 = static_cast<int>(g) * group_h + 10;
    svg += fmt::format("<text x=\"0\" y=\"{}\" font-size=\"12\" font-weight=\"bold\">{}</text>",
                       y0 + 10, XmlEscape(groups[g]));
    for (int i = 0; i < r.variants_size(); ++i) {
      const double v = values[g][static_cast<size_t>(i)];
      const int y = y0 + 16 + i * (bar + 3);
      svg += fmt::format(
          "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\" fill=\"{}\">{}</text>",
          left - 6, y + 11, Color(i), XmlEscape(r.variants(i).name()));
      if (v < 0) {
        svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>", left + 4, y + 11,
                           kNoValue);
        continue;
      }
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>"
          "<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\">{}</text>",
          left, y, v / top * width, bar, Color(i), left + v / top * width + 4, y + 11,
          fmt::format(fmt::runtime(format), v));
    }
  }
  return svg + "</svg>\n";
}

std::string ServingSection(const v1::TrainServeReport& r) {
  std::string table = "<table id=\"serving\"><thead><tr><th>variant</th><th>backend</th>";
  for (const auto& f : ServingFigures()) table += "<th>" + XmlEscape(f.label) + "</th>";
  table += "</tr></thead><tbody>\n";
  std::vector<std::string> groups;
  std::vector<std::vector<double>> values;
  for (const auto& f : ServingFigures()) {
    groups.push_back(f.label);
    values.emplace_back();
    for (const auto& v : r.variants()) values.back().push_back(FigureOf(f, v).value_or(-1));
  }
  for (int i = 0; i < r.variants_size(); ++i) {
    const auto& v = r.variants(i);
    table += fmt::format(
        "<tr><th style=\"color:{}\">{}</th><td>{}</td>", Color(i), XmlEscape(v.name()),
        v.has_serving() ? XmlEscape(v.serving().backend() + " " + v.serving().hardware())
                        : "(uploaded samples)");
    for (const auto& f : ServingFigures()) {
      const auto value = FigureOf(f, v);
      table += value ? Cell(i, f.label, *value, f.format) : NoValueCell();
    }
    table += "</tr>\n";
  }
  table += "</tbody></table>\n";
  bool any = false;
  for (const auto& v : r.variants()) any |= v.has_serving();
  if (!any) return table + "<p>No serving metrics: every run graded uploaded samples.</p>\n";
  return table + BarPlot("serving", groups, values, r, "{:.1f}");
}

std::string CategorySection(const v1::TrainServeReport& r) {
  std::string table = "<table id=\"categories\"><thead><tr><th>variant</th>";
  for (const auto& c : r.categories()) table += "<th>" + XmlEscape(c) + "</th>";
  table += "</tr></thead><tbody>\n";
  std::vector<std::string> groups(r.categories().begin(), r.categories().end());
  std::vector<std::vector<double>> values(groups.size(),
                                          std::vector<double>(r.variants_size(), -1.0));
  for (int i = 0; i < r.variants_size(); ++i) {
    const auto& v = r.variants(i);
    table += fmt::format("<tr><th style=\"color:{}\">{}</th>", Color(i), XmlEscape(v.name()));
    for (size_t g = 0; g < groups.size(); ++g) {
      const v1::CategoryAccuracy* found = FindCategory(v, groups[g]);
      if (!found) {
        table += NoValueCell();
        continue;
      }
      values[g][static_cast<size_t>(i)] = found->pass_at_1();
      table += Cell(i, "category:" + groups[g], found->pass_at_1(), "{:.4f}");
    }
    table += "</tr>\n";
  }
  table += "</tbody></table>\n";
  return table + BarPlot("categories", groups, values, r, "{:.3f}");
}

}  // namespace

std::string RenderTrainServeHtml(const v1::TrainServeReport& r) {
  std::string plots;
  for (int k : r.k()) plots += AccuracyPlot(r, k);
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{0}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #212121; }}
table {{ border-collapse: collapse; margin-bottom: 1em; }}
th, td {{ border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: left; }}
thead th {{ background: #f5f5f5; }}
svg.plot {{ display: block; margin: 0.5em 0 1.5em 0; max-width: 1100px; }}
small {{ color: #757575; }}
</style></head><body>
<h1>{0}</h1>
<p>One checkpoint served several ways. pass@k: the unbiased estimator averaged over problems,
95% bootstrap intervals over problems; deltas against the baseline are paired over the problems
both runs have (paired bootstrap interval; p: exact sign-flip permutation test for pass@1, sign
test otherwise).</p>
<h2>Accuracy against serving</h2>
{6}
<h2>Accuracy</h2>
{1}{2}
<h2>pass@1 by category</h2>
{3}<p><small>{4}</small></p>
<h2>Serving</h2>
{5}
</body></html>
)",
                     XmlEscape(r.title()), AccuracyTable(r), plots, CategorySection(r),
                     XmlEscape(r.category_rules()), ServingSection(r), TradeOffSection(r));
}

}  // namespace evald
