// Leaderboard exports; the HTML page is loaded in headless Chromium, which must render the
// table and chart and run the page's sorting code.
#include "evald/leaderboard/leaderboard.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "base/file_io.h"
#include "base/hash.h"

namespace evald {
namespace {

v1::Run FinishedRun(const std::string& id, const std::string& ck, double p1,
                    std::map<std::string, int> cats) {
  v1::Run r;
  r.set_id(id);
  r.set_state(v1::SUCCEEDED);
  r.mutable_spec()->set_checkpoint_id(ck);
  r.mutable_spec()->set_dataset("verilog-eval");
  r.mutable_spec()->set_task("spec-to-rtl");
  r.mutable_spec()->set_hardware("h100");
  r.mutable_spec()->add_k(1);
  (*r.mutable_summary()->mutable_pass_at())["1"] = p1;
  v1::ConfidenceInterval ci;
  ci.set_low(p1 - 0.05);
  ci.set_high(p1 + 0.05);
  (*r.mutable_summary()->mutable_ci95())["1"] = ci;
  int total = 0;
  for (auto& [c, n] : cats) {
    (*r.mutable_summary()->mutable_categories())[c] = n;
    total += n;
  }
  r.mutable_summary()->set_samples(total);
  r.mutable_summary()->set_problems(156);
  return r;
}

v1::Leaderboard Board() {
  std::map<std::string, v1::Checkpoint> cks;
  cks["a"].set_name("tpu-trained <script>alert(1)</script>");
  cks["a"].set_trained_on("tpu-v5p");
  cks["b"].set_name("gpu-trained, \"v2\"");
  cks["b"].set_trained_on("2xH100");
  std::vector<v1::Run> runs = {FinishedRun("run-1", "a", 0.41, {{".", 64}, {"R", 50}, {"S", 42}}),
                               FinishedRun("run-2", "b", 0.63, {{".", 98}, {"R", 40}, {"T", 18}}),
                               FinishedRun("run-3", "c", 0.52, {{".", 81}, {"I", 75}})};
  v1::Run failed = FinishedRun("run-4", "a", 0.99, {});
  failed.set_state(v1::FAILED);
  runs.push_back(failed);
  return BuildLeaderboard(runs, cks);
}

TEST(Leaderboard, RanksFinishedRunsAndRendersEveryFormat) {
  v1::Leaderboard b = Board();
  ASSERT_EQ(b.rows_size(), 3);  // the failed run is not on the board
  EXPECT_EQ(b.rows(0).run_id(), "run-2");
  EXPECT_EQ(b.rows(0).rank(), 1);
  EXPECT_EQ(b.rows(2).run_id(), "run-1");

  auto csv = RenderLeaderboard(b, "csv");
  ASSERT_TRUE(csv.ok());
  EXPECT_NE(csv->find("rank,tier,checkpoint"), std::string::npos);
  EXPECT_NE(csv->find("\"gpu-trained, \"\"v2\"\"\""), std::string::npos) << *csv;
  EXPECT_NE(csv->find("0.630000,0.580000,0.680000"), std::string::npos) << *csv;
  auto md = RenderLeaderboard(b, "markdown");
  ASSERT_TRUE(md.ok());
  EXPECT_NE(md->find("| 1 | 1 | gpu-trained, \"v2\" |"), std::string::npos) << *md;
  auto json = RenderLeaderboard(b, "json");
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->find("\"run_id\":\"run-2\""), std::string::npos);
  auto html = RenderLeaderboard(b, "html");
  ASSERT_TRUE(html.ok());
  EXPECT_EQ(html->find("<script>alert(1)"), std::string::npos);  // names are escaped
  EXPECT_NE(html->find("&lt;script&gt;"), std::string::npos);
  EXPECT_FALSE(RenderLeaderboard(b, "xml").ok());
}

// Runs over different problems are never ranked or tiered against each other: a pass rate over
// 5 problems is not compared with one over 156. Each format names the problem set.
TEST(Leaderboard, RunsOverDifferentProblemSetsAreNotCompared) {
  auto with_problems = [](v1::Run r, int count) {
    r.mutable_summary()->set_problems(count);
    for (int i = 0; i < count; ++i) {
      auto* p = r.add_problems();
      p->set_problem("P" + std::to_string(i));
      p->set_n(1);
      p->set_c(i % 2);
    }
    return r;
  };
  std::vector<v1::Run> runs = {with_problems(FinishedRun("small", "a", 0.89, {{".", 5}}), 5),
                               with_problems(FinishedRun("big-1", "b", 0.41, {{".", 9}}), 156),
                               with_problems(FinishedRun("big-2", "c", 0.52, {{".", 9}}), 156)};
  v1::Leaderboard b = BuildLeaderboard(runs, {});
  ASSERT_EQ(b.rows_size(), 3);
  EXPECT_EQ(b.rows(0).run_id(), "big-2");  // the largest problem set first, ranked within it
  EXPECT_EQ(b.rows(1).run_id(), "big-1");
  EXPECT_EQ(b.rows(2).run_id(), "small");
  EXPECT_EQ(b.rows(0).rank(), 1);
  EXPECT_EQ(b.rows(1).rank(), 2);
  EXPECT_EQ(b.rows(2).rank(), 1);
  EXPECT_EQ(b.rows(2).tier(), 1);
  EXPECT_EQ(b.rows(0).problem_set(), "verilog-eval / spec-to-rtl, 156 problems");
  EXPECT_EQ(b.rows(2).problem_set(), "verilog-eval / spec-to-rtl, 5 problems");
  ASSERT_EQ(b.pairs_size(), 1) << "only the two runs over the same problems are compared";
  EXPECT_EQ(b.pairs(0).run_a(), "big-2");
  for (const char* format : {"markdown", "html", "csv"}) {
    auto out = RenderLeaderboard(b, format);
    ASSERT_TRUE(out.ok());
    EXPECT_NE(out->find("5 problems"), std::string::npos) << format;
    EXPECT_NE(out->find("156 problems"), std::string::npos) << format;
  }
}

// One rounding everywhere (strict pass@1 0.54165 is 0.5417 beside pass@1 0.5417, not a
// truncated 0.5416), and no "-0.0000" from an interval bound computed as -0.0.
TEST(Leaderboard, FiguresAreRoundedOnceAndZeroHasNoSign) {
  v1::Run r = FinishedRun("run-1", "a", 0.54166, {{".", 10}});
  v1::ConfidenceInterval ci;
  ci.set_low(-0.0);
  ci.set_high(0.9);
  (*r.mutable_summary()->mutable_ci95())["1"] = ci;
  (*r.mutable_summary()->mutable_strict_pass_at())["1"] = 0.54166;
  v1::Leaderboard b = BuildLeaderboard({r}, {});
  for (const char* format : {"markdown", "html"}) {
    auto out = RenderLeaderboard(b, format);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->find("-0.0000"), std::string::npos) << format << "\n" << *out;
    // (HTML's sort keys, data-v="0.541660", are not shown.)
    EXPECT_EQ(out->find(" 0.5416"), std::string::npos) << format << "\n" << *out;
    EXPECT_EQ(out->find(">0.5416"), std::string::npos) << format << "\n" << *out;
    EXPECT_NE(out->find("0.5417"), std::string::npos) << format;
  }
}

// Runs of uploaded samples (no checkpoint) side by side stay distinguishable: by their name,
// else their labels, else their id.
TEST(Leaderboard, UploadedRunsAreNamedByNameLabelsOrId) {
  v1::Run named = FinishedRun("run-n", "", 0.5, {{".", 1}});
  named.mutable_spec()->set_name("gemma-int4");
  v1::Run labelled = FinishedRun("run-l", "", 0.4, {{".", 1}});
  (*labelled.mutable_spec()->mutable_labels())["quant"] = "q8_0";
  (*labelled.mutable_spec()->mutable_labels())["model"] = "gemma";
  v1::Run bare = FinishedRun("run-b", "", 0.3, {{".", 1}});
  v1::Leaderboard b = BuildLeaderboard({named, labelled, bare}, {});
  ASSERT_EQ(b.rows_size(), 3);
  EXPECT_EQ(b.rows(0).checkpoint(), "gemma-int4");
  EXPECT_EQ(b.rows(1).checkpoint(), "model=gemma,quant=q8_0");
  EXPECT_EQ(b.rows(2).checkpoint(), "run-b");
}

TEST(Leaderboard, HtmlPageWorksInHeadlessChromium) {
  const char* chromium = "/usr/bin/chromium";
  if (!IsRegularFile(chromium))
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  std::string dir = "/tmp/evald-lb-" + RandomHex(6);
  std::filesystem::create_directories(dir);
  std::string page = dir + "/board.html";
  auto html = RenderLeaderboard(Board(), "html");
  ASSERT_TRUE(html.ok());
  ASSERT_TRUE(WriteFileAtomic(page, *html).ok());
  // Sort by the pass@1 column (index 5), ascending, through the page's own code.
  std::string cmd = std::string(chromium) +
                    " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                    "--disable-background-networking --disable-component-update --disable-sync "
                    "--user-data-dir=" +
                    dir + "/profile --dump-dom 'file://" + page + "#sort=5&dir=asc' 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string dom;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) dom.append(buf, n);
  ::pclose(p);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(dom.empty()) << "chromium printed no DOM";
  // The script ran: the table is marked sorted and rows are in ascending pass@1 order.
  EXPECT_NE(dom.find("data-sorted=\"5:asc\""), std::string::npos) << dom.substr(0, 2000);
  size_t r1 = dom.find("data-run=\"run-1\""), r3 = dom.find("data-run=\"run-3\""),
         r2 = dom.find("data-run=\"run-2\"");
  ASSERT_NE(r1, std::string::npos);
  EXPECT_LT(r1, r3);
  EXPECT_LT(r3, r2);
  // The category chart is there: one bar segment per (run, category).
  size_t segments = 0;
  for (size_t at = dom.find("class=\"cat\""); at != std::string::npos;
       at = dom.find("class=\"cat\"", at + 1))
    ++segments;
  EXPECT_EQ(segments, 8u);
}

}  // namespace
}  // namespace evald
