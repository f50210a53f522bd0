#include "evald/leaderboard/leaderboard.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "base/hash.h"
#include "base/text_escape.h"
#include "evald/leaderboard/tiers.h"
#include "evald/metrics/run_comparison.h"
#include "evald/proto/json.h"

namespace evald {

namespace {

// A run without a registered checkpoint: its name, else its labels ("model=a,quant=q4"), else
// its id, so that uploaded runs side by side stay distinguishable.
std::string RowName(const v1::Run& run) {
  if (!run.spec().name().empty()) return run.spec().name();
  if (!run.spec().checkpoint_id().empty()) return run.spec().checkpoint_id();
  const std::string labels = LabelsText(run);
  return labels.empty() ? run.id() : labels;
}

}  // namespace

std::string LabelsText(const v1::Run& run) {
  std::string labels;
  std::map<std::string, std::string> sorted(run.spec().labels().begin(), run.spec().labels().end());
  for (const auto& [k, v] : sorted) labels += (labels.empty() ? "" : ",") + k + "=" + v;
  return labels;
}

namespace {

std::string CsvField(std::string_view s) {
  bool quote = s.find_first_of(",\"\n\r") != std::string_view::npos;
  // A leading = + - @ makes spreadsheets evaluate the cell: neutralise it.
  std::string v = (!s.empty() && std::string_view("=+-@").find(s[0]) != std::string_view::npos)
                      ? "'" + std::string(s)
                      : std::string(s);
  if (!quote) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

double PassAt(const v1::LeaderboardRow& r, int k) {
  auto it = r.pass_at().find(std::to_string(k));
  return it == r.pass_at().end() ? -1 : it->second;
}

// Every figure shown to four places, rounded once, and never "-0.0000" (a bound computed as
// -0.0 is zero).
std::string Shown(double v) {
  return fmt::format("{:.4f}", v == 0 ? 0.0 : v);
}

std::string Ci(const v1::LeaderboardRow& r, int k) {
  auto it = r.ci95().find(std::to_string(k));
  if (it == r.ci95().end()) return "";
  return Shown(it->second.low()) + "-" + Shown(it->second.high());
}

// The categories every run of the board uses, failures first by total count.
std::vector<std::string> CategoryOrder(const v1::Leaderboard& board) {
  std::map<std::string, int> totals;
  for (const auto& r : board.rows())
    for (const auto& [c, n] : r.categories()) totals[c] += n;
  std::vector<std::string> out;
  for (const auto& [c, n] : totals) out.push_back(c);
  std::sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) {
    if ((a == ".") != (b == ".")) return a == ".";
    return totals[a] > totals[b] || (totals[a] == totals[b] && a < b);
  });
  return out;
}

const char* CategoryColor(const std::string& c) {
  static const std::map<std::string, const char*> colors = {
      {".", "#2e7d32"}, {"R", "#c62828"}, {"r", "#ef6c00"}, {"S", "#6a1b9a"}, {"C", "#4527a0"},
      {"m", "#283593"}, {"T", "#f9a825"}, {"I", "#000000"}, {"L", "#5d4037"}, {"X", "#9e9e9e"},
      {"p", "#00838f"}, {"c", "#00695c"}, {"w", "#ad1457"}, {"n", "#558b2f"}, {"e", "#1565c0"},
      {"0", "#37474f"}, {"!", "#ff1744"}};
  auto it = colors.find(c);
  return it == colors.end() ? "#757575" : it->second;
}

// The table's rows; every cell carries its sort value in data-v.
// The run's strict pass@1 ("" when it was graded without formal checks).
std::optional<double> StrictPassAt1(const v1::LeaderboardRow& r) {
  auto it = r.strict_pass_at().find("1");
  if (it == r.strict_pass_at().end()) return std::nullopt;
  return it->second;
}

std::string HtmlRows(const v1::Leaderboard& board) {
  std::vector<int> ks(board.k().begin(), board.k().end());
  std::string rows;
  for (const auto& r : board.rows()) {
    rows += fmt::format(
        "<tr data-run=\"{}\"><td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td>"
        "<td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td>",
        XmlEscape(r.run_id()), r.rank(), r.rank(), r.tier(), r.tier(), XmlEscape(r.checkpoint()),
        XmlEscape(r.checkpoint()), XmlEscape(r.trained_on() + " " + r.hardware()),
        XmlEscape(r.trained_on() + " " + r.hardware()), XmlEscape(r.problem_set()),
        XmlEscape(r.problem_set()));
    for (int k : ks) {
      double v = PassAt(r, k);
      rows += v < 0 ? "<td data-v=\"-1\">-</td>"
                    : fmt::format("<td data-v=\"{:.6f}\">{}<br><small>{}</small></td>", v, Shown(v),
                                  Ci(r, k));
    }
    const std::optional<double> strict = StrictPassAt1(r);
    rows += !strict ? "<td data-v=\"-1\">-</td>"
                    : fmt::format("<td data-v=\"{:.6f}\">{}</td>", *strict, Shown(*strict));
    rows += fmt::format("<td data-v=\"{}\">{}</td>", r.formal_refuted(), r.formal_refuted());
    rows += fmt::format("<td data-v=\"{}\">{}</td>", r.formal_unverified(), r.formal_unverified());
    rows += fmt::format("<td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td></tr>\n", r.samples(),
                        r.samples(), XmlEscape(r.run_id()), XmlEscape(r.run_id()));
  }
  return rows;
}

std::string HtmlHead(const v1::Leaderboard& board) {
  std::string head =
      "<th data-col=\"0\">rank</th><th data-col=\"1\">tier</th><th data-col=\"2\">checkpoint</th>"
      "<th data-col=\"3\">trained / served on</th><th data-col=\"4\">problem set</th>";
  int col = 5;
  for (int k : board.k())
    head += fmt::format("<th data-col=\"{}\" data-key=\"pass{}\">pass@{}</th>", col++, k, k);
  head += fmt::format(
      "<th data-col=\"{}\" data-key=\"strict1\">strict pass@1</th><th data-col=\"{}\">formal "
      "refutes</th><th data-col=\"{}\">unverified passes</th>",
      col, col + 1, col + 2);
  col += 3;
  head += fmt::format("<th data-col=\"{}\">samples</th><th data-col=\"{}\">run</th>", col, col + 1);
  return head;
}

// Failure-category breakdown: one stacked bar per run, inline SVG.
std::string CategorySvg(const v1::Leaderboard& board) {
  auto cats = CategoryOrder(board);
  const int width = 600, bar = 18, gap = 8, label = 220;
  int height = static_cast<int>(board.rows_size()) * (bar + gap) + 40;
  std::string svg = fmt::format(
      "<svg id=\"categories\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "role=\"img\" aria-label=\"verdict categories per run\">",
      width + label + 20, height);
  int y = 10;
  for (const auto& r : board.rows()) {
    int total = 0;
    for (const auto& [c, n] : r.categories()) total += n;
    svg += fmt::format("<text x=\"0\" y=\"{}\" font-size=\"12\">{}</text>", y + 13,
                       XmlEscape(r.checkpoint().substr(0, 32)));
    double x = label;
    for (const auto& c : cats) {
      auto it = r.categories().find(c);
      if (it == r.categories().end() || total == 0) continue;
      double w = static_cast<double>(it->second) / total * width;
      svg += fmt::format(
          "<rect class=\"cat\" data-cat=\"{}\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" "
          "height=\"{}\" fill=\"{}\"><title>{}: {} of {}</title></rect>",
          XmlEscape(c), x, y, w, bar, CategoryColor(c), XmlEscape(c), it->second, total);
      x += w;
    }
    y += bar + gap;
  }
  int lx = label;
  for (const auto& c : cats) {
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>",
        lx, y + 6, CategoryColor(c), lx + 16, y + 16, XmlEscape(c == "." ? "pass" : c));
    lx += 48;
  }
  svg += "</svg>";
  return svg;
}

// Every pair of runs on pass@1: row minus column, its interval and Holm-adjusted p; significant
// cells marked.
std::string PairMatrixHtml(const v1::Leaderboard& board) {
  if (board.pairs_size() == 0) return "<p>(fewer than two runs: no pairs)</p>";
  std::map<std::pair<std::string, std::string>, const v1::PairwiseComparison*> pairs;
  for (const auto& p : board.pairs()) pairs[{p.run_a(), p.run_b()}] = &p;
  std::string out = "<table id=\"pairs\"><thead><tr><th>B \\ A</th>";
  for (const auto& r : board.rows()) out += "<th>" + XmlEscape(r.checkpoint()) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& b : board.rows()) {
    out += "<tr><th>" + XmlEscape(b.checkpoint()) + "</th>";
    for (const auto& a : board.rows()) {
      const v1::PairwiseComparison* p = nullptr;
      double sign = 1;
      if (auto it = pairs.find({a.run_id(), b.run_id()}); it != pairs.end()) p = it->second;
      if (auto it = pairs.find({b.run_id(), a.run_id()}); !p && it != pairs.end()) {
        p = it->second;
        sign = -1;  // stored as b - a the other way round
      }
      if (!p || p->p() < 0) {
        out += "<td>-</td>";
        continue;
      }
      const double lo = sign > 0 ? p->delta_ci95().low() : -p->delta_ci95().high();
      const double hi = sign > 0 ? p->delta_ci95().high() : -p->delta_ci95().low();
      out += fmt::format(
          "<td class=\"{}\" data-a=\"{}\" data-b=\"{}\" data-delta=\"{:.6f}\" "
          "data-p-holm=\"{:.6g}\">{:+.4f}<br><small>[{:+.4f}, {:+.4f}] p<sub>Holm</sub> "
          "{:.3g} MDE {}</small></td>",
          p->significant() ? "sig" : "ns", XmlEscape(a.run_id()), XmlEscape(b.run_id()),
          sign * p->delta(), p->p_holm(), sign * p->delta(), lo, hi, p->p_holm(),
          FormatMde(p->mde()));
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n<p><small>" + XmlEscape(board.tier_method()) +
         fmt::format("; alpha {}.</small></p>", board.alpha());
}

// The page: table, chart and a small sorting script, all inline (nothing fetched).
std::string RenderHtml(const v1::Leaderboard& board) {
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>evald leaderboard</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #212121; }}
table {{ border-collapse: collapse; }}
th, td {{ border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: left; vertical-align: top; }}
th {{ cursor: pointer; user-select: none; background: #f5f5f5; }}
th.asc::after {{ content: " \25B2"; }} th.desc::after {{ content: " \25BC"; }}
small {{ color: #757575; }}
td.sig {{ background: #e8f5e9; }}
</style></head><body>
<h1>evald leaderboard</h1>
<p>pass@k is the unbiased estimator of Chen et al. (2021), averaged over problems; the small
figures are 95% bootstrap confidence intervals over problems. Click a column to sort.</p>
<table id="board"><thead><tr>{}</tr></thead><tbody>
{}</tbody></table>
<h2>Pairwise comparisons (pass@1, row minus column)</h2>
{}
<h2>Verdict categories</h2>
{}
<script>
(function () {{
  var table = document.getElementById('board');
  function sortBy(col, dir) {{
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {{
      var x = a.cells[col].getAttribute('data-v'), y = b.cells[col].getAttribute('data-v');
      var nx = parseFloat(x), ny = parseFloat(y);
      var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
      return dir === 'asc' ? c : -c;
    }});
    rows.forEach(function (r) {{ body.appendChild(r); }});
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {{ th.className = ''; }});
    table.tHead.rows[0].cells[col].className = dir;
    table.setAttribute('data-sorted', col + ':' + dir);
  }}
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {{
    th.addEventListener('click', function () {{
      sortBy(i, th.className === 'desc' ? 'asc' : 'desc');
    }});
  }});
  // #sort=<column>&dir=asc|desc applies a sort on load (links, tests).
  var m = /sort=(\d+)(?:&dir=(asc|desc))?/.exec(location.hash);
  if (m) sortBy(parseInt(m[1], 10), m[2] || 'desc');
}})();
</script>
</body></html>
)",
                     HtmlHead(board), HtmlRows(board), PairMatrixHtml(board), CategorySvg(board));
}

}  // namespace

namespace {

// Each row's problem set: "dataset / task, N problems", and a digest of the problem names (and of
// the problems' contents, where the run recorded its benchmark) where two different sets of the
// board would otherwise read alike.
void NameProblemSets(const std::vector<v1::Run>& runs, v1::Leaderboard* board) {
  std::map<std::string, std::string> digest_of_run;
  for (const auto& run : runs) {
    std::vector<std::string> fields;  // the sorted problem names, then the contents' digest
    for (const auto& p : run.problems()) fields.push_back(p.problem());
    std::sort(fields.begin(), fields.end());
    fields.push_back(run.benchmark().problems_sha256());
    digest_of_run[run.id()] =
        Sha256OfFields(std::vector<std::string_view>(fields.begin(), fields.end())).substr(0, 8);
  }
  std::map<std::string, std::set<std::string>> digests_of_label;
  auto label = [](const v1::LeaderboardRow& r) {
    return fmt::format("{} / {}, {} problems", r.dataset(), r.task(), r.problems());
  };
  for (const auto& r : board->rows()) digests_of_label[label(r)].insert(digest_of_run[r.run_id()]);
  for (auto& r : *board->mutable_rows()) {
    const std::string l = label(r);
    r.set_problem_set(digests_of_label[l].size() > 1 ? l + " (" + digest_of_run[r.run_id()] + ")"
                                                     : l);
  }
}

}  // namespace

v1::Leaderboard BuildLeaderboard(const std::vector<v1::Run>& runs,
                                 const std::map<std::string, v1::Checkpoint>& checkpoints,
                                 int rank_k, double alpha, PairwiseCache* cache) {
  v1::Leaderboard board;
  std::set<int> ks;
  for (const auto& run : runs) {
    if (run.state() != v1::SUCCEEDED) continue;
    v1::LeaderboardRow row;
    row.set_run_id(run.id());
    auto ck = checkpoints.find(run.spec().checkpoint_id());
    if (ck != checkpoints.end()) {
      row.set_checkpoint(ck->second.name());
      row.set_trained_on(ck->second.trained_on());
    } else {
      row.set_checkpoint(RowName(run));
    }
    row.set_hardware(run.spec().hardware());
    row.set_dataset(run.spec().dataset());
    row.set_task(run.spec().task());
    row.set_simulator(run.spec().grading().simulator());
    row.set_problems(run.summary().problems());
    row.set_samples(run.summary().samples());
    *row.mutable_pass_at() = run.summary().pass_at();
    *row.mutable_ci95() = run.summary().ci95();
    *row.mutable_categories() = run.summary().categories();
    *row.mutable_strict_pass_at() = run.summary().strict_pass_at();
    row.set_formal_refuted(run.summary().formal_refuted());
    row.set_formal_proven_failures(run.summary().formal_proven_failures());
    row.set_formal_unverified(run.summary().formal_unverified());
    row.set_median_area_ratio(run.summary().synthesis().median_area_ratio());
    *row.mutable_labels() = run.spec().labels();
    row.set_finished_unix_ms(run.finished_unix_ms());
    for (int k : run.spec().k()) ks.insert(k);
    *board.add_rows() = std::move(row);
  }
  NameProblemSets(runs, &board);
  // Grouped by problem set (the largest first), ranked within each: a pass rate over 12
  // problems is not ranked against one over 156.
  std::map<std::string, int> set_size;
  for (const auto& r : board.rows()) set_size[r.problem_set()] = r.problems();
  std::stable_sort(board.mutable_rows()->begin(), board.mutable_rows()->end(),
                   [&](const v1::LeaderboardRow& a, const v1::LeaderboardRow& b) {
                     if (a.problem_set() != b.problem_set())
                       return std::make_pair(-set_size[a.problem_set()], a.problem_set()) <
                              std::make_pair(-set_size[b.problem_set()], b.problem_set());
                     return PassAt(a, rank_k) > PassAt(b, rank_k);
                   });
  for (int i = 0, rank = 0; i < board.rows_size(); ++i) {
    rank = i > 0 && board.rows(i).problem_set() == board.rows(i - 1).problem_set() ? rank + 1 : 1;
    board.mutable_rows(i)->set_rank(rank);
  }
  for (int k : ks) board.add_k(k);
  std::map<std::string, const v1::Run*> by_id;
  for (const auto& run : runs) by_id[run.id()] = &run;
  AssignTiers(by_id, alpha, &board, cache);
  return board;
}

StatusOr<std::string> RenderLeaderboard(const v1::Leaderboard& board, std::string_view format) {
  std::vector<int> ks(board.k().begin(), board.k().end());
  if (format == "json") return ToJson(board, /*pretty=*/false);
  if (format == "csv") {
    std::string out =
        "rank,tier,checkpoint,trained_on,hardware,dataset,task,simulator,problems,samples";
    for (int k : ks) out += fmt::format(",pass@{},pass@{}_ci95_low,pass@{}_ci95_high", k, k, k);
    out +=
        ",run_id,strict_pass@1,formal_refuted,formal_proven_failures,median_area_ratio,"
        "formal_unverified,problem_set\n";
    for (const auto& r : board.rows()) {
      out +=
          fmt::format("{},{},{},{},{},{},{},{},{},{}", r.rank(), r.tier(), CsvField(r.checkpoint()),
                      CsvField(r.trained_on()), CsvField(r.hardware()), CsvField(r.dataset()),
                      CsvField(r.task()), CsvField(r.simulator()), r.problems(), r.samples());
      for (int k : ks) {
        auto key = std::to_string(k);
        auto v = r.pass_at().find(key);
        auto ci = r.ci95().find(key);
        out += v == r.pass_at().end() ? ",," : fmt::format(",{:.6f}", v->second);
        out += ci == r.ci95().end()
                   ? (v == r.pass_at().end() ? "" : ",,")
                   : fmt::format(",{:.6f},{:.6f}", ci->second.low(), ci->second.high());
      }
      const std::optional<double> strict = StrictPassAt1(r);
      out += "," + CsvField(r.run_id()) + "," +
             (strict ? fmt::format("{:.6f}", *strict) : std::string()) +
             fmt::format(",{},{},{},{},{}\n", r.formal_refuted(), r.formal_proven_failures(),
                         r.median_area_ratio() > 0 ? fmt::format("{:.4f}", r.median_area_ratio())
                                                   : std::string(),
                         r.formal_unverified(), CsvField(r.problem_set()));
    }
    return out;
  }
  if (format == "markdown" || format == "md") {
    std::string out = "| rank | tier | checkpoint | trained / served on | problem set |";
    for (int k : ks) out += fmt::format(" pass@{} (95% CI) |", k);
    out += " strict pass@1 | formal refutes | unverified | samples | run |\n|---|---|---|---|---|";
    for (size_t i = 0; i < ks.size(); ++i) out += "---|";
    out += "---|---|---|---|---|\n";
    for (const auto& r : board.rows()) {
      out += fmt::format(
          "| {} | {} | {} | {} | {} |", r.rank(), r.tier(), MarkdownEscape(r.checkpoint()),
          MarkdownEscape(r.trained_on() + " " + r.hardware()), MarkdownEscape(r.problem_set()));
      for (int k : ks) {
        double v = PassAt(r, k);
        out += v < 0 ? " - |" : fmt::format(" {} ({}) |", Shown(v), Ci(r, k));
      }
      const std::optional<double> strict = StrictPassAt1(r);
      out += fmt::format(" {} | {} | {} | {} | {} |\n", strict ? Shown(*strict) : "-",
                         r.formal_refuted(), r.formal_unverified(), r.samples(),
                         MarkdownEscape(r.run_id()));
    }
    if (board.pairs_size() > 0)
      out += fmt::format("\nTiers: {} (alpha {}).\n", MarkdownEscape(board.tier_method()),
                         board.alpha());
    return out;
  }
  if (format == "html") return RenderHtml(board);
  return Status::InvalidArgument("unknown leaderboard format '" + std::string(format) +
                                 "' (csv, json, markdown, html)");
}

std::string LeaderboardContentType(std::string_view format) {
  if (format == "csv") return "text/csv; charset=utf-8";
  if (format == "markdown" || format == "md") return "text/markdown; charset=utf-8";
  if (format == "html") return "text/html; charset=utf-8";
  return "application/json";
}

}  // namespace evald
