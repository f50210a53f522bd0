// The train-vs-serve report: built from runs of one checkpoint served several ways, rendered as
// JSON, Markdown and HTML; the HTML page rendered by headless Chromium with no console error,
// and every number on it (data-variant / data-metric cells) equal to the JSON report's.
// Checked by eye (chromium --screenshot, 2026-12-02, of `evald report train-serve` over three
// stories260K runs: F32, Q8_0, Q4_0 on the core): pass@1 against E2E p99 and against tokens/s
// with every point named, the dot-and-whisker plots with whole names and their titles clear of
// the axis, named bars, "—" for what a run lacks; the plots scale with the page.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>

#include "base/file_io.h"
#include "base/hash.h"
#include "datasets/dataset.h"
#include "datasets/problem_category.h"
#include "evald/report/train_serve.h"
#include "evald/runs/scoring.h"
#include "evald/text/report_printer.h"
#include "test_support.h"

namespace evald {
namespace {

// A run over the built-in problems: problem i passes c_of(i) of 10 samples.
ServeRun Variant(const Dataset& ds, const std::string& name, int shift, double ttft_ms) {
  ServeRun r;
  r.run = "run-" + name;
  r.name = name;
  r.report.add_k(1);
  r.report.add_k(5);
  int i = 0;
  for (const auto& p : ds.problems()) {
    const int c = (i * 3 + shift) % 11;
    for (int s = 0; s < 10; ++s) {
      auto* sample = r.report.add_samples();
      sample->set_problem(p.name);
      sample->set_index(s);
      sample->set_passed(s < c);
      sample->set_verdict(s < c ? "." : "R");
    }
    ++i;
  }
  ComputeMetrics({1, 5}, &r.report);
  auto* m = r.report.mutable_serving();
  m->set_backend(name.find("core") != std::string::npos ? "core" : "remote");
  m->set_hardware(name);
  m->mutable_ttft()->set_median_ms(ttft_ms);
  m->mutable_ttft()->set_p99_ms(ttft_ms * 2.5);
  m->mutable_tpot()->set_median_ms(ttft_ms / 20);
  m->mutable_itl()->set_median_ms(ttft_ms / 21);
  m->mutable_itl()->set_p99_ms(ttft_ms / 7);
  m->mutable_e2e()->set_p99_ms(ttft_ms * 30);
  m->set_output_token_throughput(10000 / ttft_ms);
  m->set_completed_requests(14);
  m->set_total_output_tokens(14 * 200);
  m->set_duration_s(30);
  m->set_streamed(true);
  return r;
}

class TrainServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ds = Dataset::Load(testing::BuiltinDataset(), Task::kSpecToRtl);
    ASSERT_TRUE(ds.ok());
    for (const auto& p : ds->problems()) categories_[p.name] = std::string(ProblemCategory(p));
    runs_ = {Variant(*ds, "bf16-gpu-vllm", 0, 40), Variant(*ds, "bf16-tpu-vllm", 1, 55),
             Variant(*ds, "q4_0-evald-core", 3, 120)};
    auto r = BuildTrainServeReport(runs_, 0, categories_, "gemma train vs serve");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    report_ = *r;
  }
  std::map<std::string, std::string> categories_;
  std::vector<ServeRun> runs_;
  v1::TrainServeReport report_;
};

TEST_F(TrainServeTest, DeltasAgainstTheBaselineCategoriesAndServing) {
  ASSERT_EQ(report_.variants_size(), 3);
  EXPECT_TRUE(report_.variants(0).baseline());
  EXPECT_TRUE(report_.variants(0).delta().empty());
  EXPECT_EQ(report_.variants(1).delta().count("1"), 1u);
  EXPECT_NEAR(report_.variants(1).delta().at("1"),
              report_.variants(1).pass_at().at("1") - report_.variants(0).pass_at().at("1"), 1e-9);
  EXPECT_GE(report_.categories_size(), 2);  // the built-in set has several kinds of design
  EXPECT_TRUE(report_.variants(2).has_serving());
  auto md = RenderTrainServeReport(report_, "markdown");
  ASSERT_TRUE(md.ok());
  EXPECT_NE(md->find("evald-core"), std::string::npos) << *md;
  EXPECT_FALSE(RenderTrainServeReport(report_, "pdf").ok());
  EXPECT_FALSE(BuildTrainServeReport(runs_, 7, categories_, "x").ok());
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// An `evald drift` report attached to the train-vs-serve report: each variant served from a file
// it measured shows that file's drift beside its pass@k deltas (matched by path or file name);
// the base file's variant drifts by nothing; a variant from another file shows "—".
TEST_F(TrainServeTest, DriftFromAnEvaldDriftReportSitsBesideThePassAtKDeltas) {
  std::vector<ServeRun> runs = runs_;
  runs[0].report.mutable_serving()->set_endpoint("/models/gemma-f16.gguf");
  runs[1].report.mutable_serving()->set_endpoint("/models/gemma-q8_0-other.gguf");
  runs[2].report.mutable_serving()->set_endpoint("/models/gemma-q4_0.gguf");
  auto r = BuildTrainServeReport(runs, 0, categories_, "with drift");
  ASSERT_TRUE(r.ok());
  v1::DriftReport drift;
  drift.set_base("/models/gemma-f16.gguf");
  auto* q4 = drift.add_variants();
  q4->set_file("/elsewhere/gemma-q4_0.gguf");  // the same file name
  q4->mutable_overall()->set_tokens(900);
  q4->mutable_overall()->set_mean_kl(0.0421);
  q4->mutable_overall()->set_top1_agreement(0.93);
  EXPECT_EQ(AttachDrift(drift, &*r), 2);
  EXPECT_DOUBLE_EQ(r->variants(0).drift().mean_kl(), 0);
  EXPECT_DOUBLE_EQ(r->variants(0).drift().top1_agreement(), 1);
  EXPECT_FALSE(r->variants(1).has_drift());
  EXPECT_DOUBLE_EQ(r->variants(2).drift().mean_kl(), 0.0421);
  auto html = RenderTrainServeReport(*r, "html");
  auto md = RenderTrainServeReport(*r, "markdown");
  ASSERT_TRUE(html.ok() && md.ok());
  EXPECT_NE(html->find("<th>mean KL from the base file</th>"), std::string::npos);
  EXPECT_NE(html->find("data-variant=\"2\" data-metric=\"drift:mean_kl\" data-v=\"0.042100\""),
            std::string::npos)
      << *html;
  EXPECT_NE(md->find("## Drift from /models/gemma-f16.gguf"), std::string::npos) << *md;
  EXPECT_NE(md->find("| q4\\_0-evald-core | 0.042100 |"), std::string::npos) << *md;
}

// The value the JSON report holds for a page cell's (variant, metric).
double JsonValue(const v1::ServeVariant& v, const std::string& metric) {
  auto k_of = [&](size_t at) { return metric.substr(at); };
  if (metric.rfind("pass@", 0) == 0) return v.pass_at().at(k_of(5));
  if (metric.rfind("delta@", 0) == 0) return v.delta().at(k_of(6));
  if (metric.rfind("p@", 0) == 0) return v.delta_p().at(k_of(2));
  if (metric == "drift:mean_kl") return v.drift().mean_kl();
  if (metric == "drift:top1") return v.drift().top1_agreement();
  if (metric.rfind("category:", 0) == 0) {
    for (const auto& c : v.categories())
      if (c.category() == metric.substr(9)) return c.pass_at_1();
    return NAN;
  }
  const auto& s = v.serving();
  const std::map<std::string, double> serving = {{"TTFT median (ms)", s.ttft().median_ms()},
                                                 {"TTFT p99 (ms)", s.ttft().p99_ms()},
                                                 {"TPOT median (ms)", s.tpot().median_ms()},
                                                 {"ITL median (ms)", s.itl().median_ms()},
                                                 {"ITL p99 (ms)", s.itl().p99_ms()},
                                                 {"E2E p99 (ms)", s.e2e().p99_ms()},
                                                 {"output tokens/s", s.output_token_throughput()}};
  auto it = serving.find(metric);
  return it == serving.end() ? NAN : it->second;
}

TEST_F(TrainServeTest, PageRendersInHeadlessChromiumWithTheJsonsNumbers) {
  const char* chromium = "/usr/bin/chromium";
  if (!IsRegularFile(chromium))
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  auto html = RenderTrainServeReport(report_, "html");
  ASSERT_TRUE(html.ok());
  EXPECT_EQ(html->find("<script"), std::string::npos);  // nothing runs, nothing is fetched
  EXPECT_EQ(html->find("http://"), html->find("http://www.w3.org/2000/svg"));
  std::string dir = "/tmp/evald-ts-" + RandomHex(6);
  std::filesystem::create_directories(dir);
  const std::string page = dir + "/report.html", log = dir + "/chromium.log";
  ASSERT_TRUE(WriteFileAtomic(page, *html).ok());
  const std::string cmd = std::string(chromium) +
                          " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                          "--disable-background-networking --disable-component-update "
                          "--disable-sync --enable-logging=stderr --v=0 --user-data-dir=" +
                          dir + "/profile --dump-dom 'file://" + page + "' 2>" + log;
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string dom;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) dom.append(buf, n);
  ::pclose(p);
  auto messages = ReadFileBounded(log, 1 << 24);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(dom.empty()) << "chromium printed no DOM";
  ASSERT_TRUE(messages.ok());
  EXPECT_EQ(messages->find("CONSOLE"), std::string::npos) << *messages;
  EXPECT_EQ(messages->find("Uncaught"), std::string::npos) << *messages;
  // Every number cell, as the browser parsed it, against the JSON report.
  std::regex cell(
      "<td data-variant=\"(\\d+)\" data-metric=\"([^\"]+)\" data-v=\"([-0-9.e+]+)\">([^<]*)</td>");
  int cells = 0;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), cell); it != std::sregex_iterator();
       ++it) {
    const int variant = std::stoi((*it)[1]);
    std::string metric = (*it)[2];
    for (size_t at; (at = metric.find("&amp;")) != std::string::npos;) metric.replace(at, 5, "&");
    ASSERT_LT(variant, report_.variants_size());
    const double expected = JsonValue(report_.variants(variant), metric);
    ASSERT_FALSE(std::isnan(expected)) << metric;
    EXPECT_NEAR(std::stod((*it)[3]), expected, 5e-7) << metric;
    const double shown = std::stod((*it)[4]);
    EXPECT_NEAR(shown, expected, 0.5 * std::pow(10, -(metric.rfind("pass@", 0) == 0 ? 4 : 1)))
        << metric << " shown as " << (*it)[4];
    ++cells;
  }
  // 3 variants x (2 pass@k) + 2 x (2 deltas + 2 p) + categories + 7 serving figures each.
  EXPECT_GE(cells, 3 * 2 + 2 * 4 + 3 * report_.categories_size() + 3 * 7);
  size_t plots = 0;
  for (size_t at = dom.find("class=\"plot\""); at != std::string::npos;
       at = dom.find("class=\"plot\"", at + 1))
    ++plots;
  // pass@1, pass@5, categories, serving, and pass@1 against E2E p99 and against tokens/s.
  EXPECT_EQ(plots, 6u);
  for (const auto& v : report_.variants())  // every bar and point is named, not just coloured
    EXPECT_GE(Count(dom, ">" + v.name() + "</text>"), 4u) << v.name();
}

// The Pareto front of accuracy against serving: a variant is on it when no other is at least as
// accurate and at least as fast, and better in one. A run answered from stored generations
// measured nothing: its serving figures are "—", never 0.0, and it is not plotted.
TEST_F(TrainServeTest, TheTradeOffPlotsMarkTheParetoFrontAndShowNoValueAsADash) {
  auto html = RenderTrainServeReport(report_, "html");
  ASSERT_TRUE(html.ok());
  // bf16-gpu (40 ms) is the fastest; a variant slower and less accurate than another is off it.
  std::vector<std::pair<double, double>> points;  // (E2E p99, pass@1)
  for (const auto& v : report_.variants())
    points.emplace_back(v.serving().e2e().p99_ms(), v.pass_at().at("1"));
  for (size_t i = 0; i < points.size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < points.size(); ++j)
      dominated |= j != i && points[j].first <= points[i].first &&
                   points[j].second >= points[i].second &&
                   (points[j].first < points[i].first || points[j].second > points[i].second);
    const std::string mark = "data-variant=\"" + std::to_string(i) + "\" data-pareto=\"" +
                             (dominated ? "0" : "1") + "\"";
    EXPECT_NE(html->find(mark), std::string::npos) << mark;
  }
  EXPECT_NE(html->find("data-variant=\"0\" data-pareto=\"1\""), std::string::npos)
      << "the fastest variant is always on the latency front";

  std::vector<ServeRun> runs = runs_;
  runs[2].report.mutable_serving()->set_completed_requests(0);  // every sample from the store
  runs[2].report.mutable_serving()->set_cached_samples(140);
  auto r = BuildTrainServeReport(runs, 0, categories_, "cached");
  ASSERT_TRUE(r.ok());
  auto page = RenderTrainServeReport(*r, "html");
  auto md = RenderTrainServeReport(*r, "markdown");
  ASSERT_TRUE(page.ok() && md.ok());
  EXPECT_EQ(page->find("data-variant=\"2\" data-metric=\"TTFT median (ms)\""), std::string::npos);
  EXPECT_NE(page->find("<td>\u2014</td>"), std::string::npos);
  EXPECT_NE(page->find("Not plotted (no E2E p99 (ms)): q4_0-evald-core"), std::string::npos);
  EXPECT_EQ(page->find("data-variant=\"2\" data-pareto"), std::string::npos);
  const size_t row = md->find("| q4\\_0-evald-core |", md->find("## Serving"));
  ASSERT_NE(row, std::string::npos) << *md;
  const std::string line = md->substr(row, md->find('\n', row) - row);
  EXPECT_EQ(line.find("0.0"), std::string::npos) << line;
  EXPECT_NE(line.find("\u2014"), std::string::npos) << line;
}

}  // namespace
}  // namespace evald
