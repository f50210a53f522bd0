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
  out += "</tr></thead><tbody>\n";
  for (int i = 0; i < r.variants_size(); ++i) {
    const auto& v = r.variants(i);
    out += fmt::format("<tr><th style=\"color:{}\">{}{}</th><td>{}</td>", Color(i),
                       XmlEscape(v.name()), v.baseline() ? " (baseline)" : "", XmlEscape(v.run()));
    for (int k : r.k()) {
      const std::string key = std::to_string(k);
      const double value = ValueAt(v.pass_at(), k);
      out += value < 0 ? "<td>-</td>" : Cell(i, "pass@" + key, value, "{:.4f}");
      auto ci = v.ci95().find(key);
      out += ci == v.ci95().end()
                 ? "<td>-</td>"
                 : fmt::format("<td>{:.4f}-{:.4f}</td>", ci->second.low(), ci->second.high());
      auto d = v.delta().find(key);
      if (d == v.delta().end()) {
        out += "<td>-</td><td>-</td><td>-</td>";
        continue;
      }
      out += Cell(i, "delta@" + key, d->second, "{:+.4f}");
      out += fmt::format("<td>{:+.4f} to {:+.4f}</td>", v.delta_ci95().at(key).low(),
                         v.delta_ci95().at(key).high());
      out += Cell(i, "p@" + key, v.delta_p().at(key), "{:.3g}");
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

// pass@k of every variant: a dot at the value, a whisker over its 95% interval, on 0..1.
std::string AccuracyPlot(const v1::TrainServeReport& r, int k) {
  const int left = 180, width = 480, row = 26;
  const int height = r.variants_size() * row + 40;
  auto x = [&](double v) { return left + v * width; };
  std::string svg = fmt::format(
      "<svg class=\"plot\" data-plot=\"pass@{}\" xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"pass@{} with 95% intervals\">",
      k, left + width + 40, height, k);
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"12\" font-weight=\"bold\">pass@{} "
      "(95% interval)</text>",
      0, height - 6, k);
  for (int t = 0; t <= 4; ++t) {
    const double v = t / 4.0;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"10\" x2=\"{0:.1f}\" y2=\"{1}\" stroke=\"#e0e0e0\"/>"
        "<text x=\"{0:.1f}\" y=\"{2}\" font-size=\"11\" text-anchor=\"middle\">{3:.2f}</text>",
        x(v), height - 20, height - 6, v);
  }
  for (int i = 0; i < r.variants_size(); ++i) {
    const auto& v = r.variants(i);
    const double value = ValueAt(v.pass_at(), k);
    if (value < 0) continue;
    const int y = 22 + i * row;
    auto ci = v.ci95().find(std::to_string(k));
    svg += fmt::format("<text x=\"0\" y=\"{}\" font-size=\"12\">{}</text>", y + 4,
                       XmlEscape(v.name().substr(0, 28)));
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

// Horizontal bars, one group per label, one bar per variant, scaled to the largest value.
std::string BarPlot(const std::string& id, const std::vector<std::string>& groups,
                    const std::vector<std::vector<double>>& values,  // [group][variant], < 0: none
                    const v1::TrainServeReport& r, const char* format) {
  double top = 0;
  for (const auto& g : values)
    for (double v : g) top = std::max(top, v);
  if (top <= 0) top = 1;
  const int left = 180, width = 420, bar = 12;
  const int group_h = r.variants_size() * (bar + 2) + 14;
  const int height = static_cast<int>(groups.size()) * group_h + 10;
  std::string svg = fmt::format(
      "<svg class=\"plot\" data-plot=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" "
      "height=\"{}\" role=\"img\" aria-label=\"{}\">",
      XmlEscape(id), left + width + 90, height, XmlEscape(id));
  for (size_t g = 0; g < groups.size(); ++g) {
    const int y0 = static_cast<int>(g) * group_h + 10;
    svg += fmt::format("<text x=\"0\" y=\"{}\" font-size=\"12\" font-weight=\"bold\">{}</text>",
                       y0 + 10, XmlEscape(groups[g]));
    for (int i = 0; i < r.variants_size(); ++i) {
      const double v = values[g][static_cast<size_t>(i)];
      if (v < 0) continue;
      const int y = y0 + i * (bar + 2);
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>"
          "<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\">{}</text>",
          left, y, v / top * width, bar, Color(i), left + v / top * width + 4, y + 10,
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
    for (const auto& v : r.variants())
      values.back().push_back(v.has_serving() ? f.get(v.serving()) : -1);
  }
  for (int i = 0; i < r.variants_size(); ++i) {
    const auto& v = r.variants(i);
    table += fmt::format(
        "<tr><th style=\"color:{}\">{}</th><td>{}</td>", Color(i), XmlEscape(v.name()),
        v.has_serving() ? XmlEscape(v.serving().backend() + " " + v.serving().hardware())
                        : "(uploaded samples)");
    for (const auto& f : ServingFigures())
      table += v.has_serving() ? Cell(i, f.label, f.get(v.serving()), f.format) : "<td>-</td>";
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
        table += "<td>-</td>";
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
svg.plot {{ display: block; margin: 0.5em 0 1.5em 0; }}
small {{ color: #757575; }}
</style></head><body>
<h1>{0}</h1>
<p>One checkpoint served several ways. pass@k: the unbiased estimator averaged over problems,
95% bootstrap intervals over problems; deltas against the baseline are paired over the problems
both runs have (paired bootstrap interval; p: exact sign-flip permutation test for pass@1, sign
test otherwise).</p>
<h2>Accuracy</h2>
{1}{2}
<h2>pass@1 by category</h2>
{3}<p><small>{4}</small></p>
<h2>Serving</h2>
{5}
</body></html>
)",
                     XmlEscape(r.title()), AccuracyTable(r), plots, CategorySection(r),
                     XmlEscape(r.category_rules()), ServingSection(r));
}

}  // namespace evald
