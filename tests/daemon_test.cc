// The daemon's API end to end, over loopback: auth, malformed and oversized requests, unknown
// ids, checkpoints and runs, concurrent submissions, the verdict cache across runs, comparisons,
// leaderboards, metrics, and the OpenAPI description of every route.
#include <map>
#include <regex>
#include <sstream>

#include "evald/proto/api.pb.h"
#include "evald/proto/compare.pb.h"
#include "evald/server/api.h"

#include "daemon_fixture.h"

namespace evald {
namespace {

TEST_F(DaemonTest, AuthAndErrorsAreJsonWithTheRightStatus) {
  StartDaemon("--max-body-mb 1");
  EXPECT_EQ(Get("/healthz", "").status, 200);
  auto none = Get("/v1/runs", "");
  EXPECT_EQ(none.status, 401);
  EXPECT_NE(none.body.find("\"error\""), std::string::npos);
  EXPECT_EQ(Get("/v1/runs", "wrong-token-0123456789").status, 401);
  EXPECT_EQ(Post("/v1/checkpoints", "{\"name\":\"x\"}", kRead).status, 403);
  auto bad = Post("/v1/checkpoints", "{\"name\": ");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("malformed JSON"), std::string::npos) << bad.body;
  EXPECT_EQ(Post("/v1/checkpoints", "{\"nmae\": \"typo\"}").status, 400);
  EXPECT_EQ(Post("/v1/checkpoints", "{}").status, 400);  // a checkpoint needs a name
  EXPECT_EQ(Get("/v1/runs/run-does-not-exist").status, 404);
  EXPECT_EQ(Get("/v1/checkpoints/nope").status, 404);
  EXPECT_EQ(Get("/v1/nothing-here").status, 404);
  EXPECT_EQ(Http(daemon_.port(), "DELETE", "/v1/runs", kSubmit).status, 405);
  // Every error is {"error", "status"} JSON, the transport's own (413, malformed) included.
  auto too_big = Post("/v1/runs", std::string(2 << 20, 'x'));
  EXPECT_EQ(too_big.status, 413);
  EXPECT_EQ(Parse<v1::ErrorResponse>(too_big.body).status(), 413) << too_big.body;
  {
    auto run = CreateRun(BuiltinSamples());
    auto garbage = Get("/v1/runs/" + run + "/samples?page_token=zzz");
    EXPECT_EQ(garbage.status, 400) << garbage.body;
    EXPECT_EQ(Parse<v1::ErrorResponse>(garbage.body).status(), 400) << garbage.body;
    EXPECT_EQ(Get("/v1/runs/" + run + "/samples?page_token=Bi01_and_gate/00000000").status, 200);
  }
  EXPECT_EQ(Post("/v1/runs", "{\"samples_jsonl\": \"not json\\n\"}").status, 400);
  auto ds = Post("/v1/runs", "{\"spec\": {\"dataset\": \"/etc\"}, \"samples_jsonl\": \"{}\"}");
  EXPECT_EQ(ds.status, 400);
  EXPECT_NE(ds.body.find("unknown dataset"), std::string::npos) << ds.body;
  EXPECT_EQ(Get("/v1/leaderboard?format=pdf").status, 400);
  EXPECT_EQ(Get("/v1/compare?a=x").status, 400);
  // Still healthy after all that.
  EXPECT_EQ(Get("/healthz", "").status, 200);
}

// One scenario through every read endpoint (longer than most functions on purpose: each step
// reads what the previous ones wrote, and splitting it would repeat the runs).
TEST_F(DaemonTest, CheckpointsRunsSamplesCompareLeaderboardAndMetrics) {
  StartDaemon();
  auto ck = Post("/v1/checkpoints",
                 "{\"name\": \"gemma-31b-lora\", \"trained_on\": \"tpu-v5p\", \"labels\": "
                 "{\"team\": \"rtl\"}}");
  ASSERT_EQ(ck.status, 201) << ck.body;
  std::string ck_id = Parse<v1::Checkpoint>(ck.body).id();
  EXPECT_EQ(Parse<v1::Checkpoint>(Get("/v1/checkpoints/" + ck_id).body).trained_on(), "tpu-v5p");
  EXPECT_NE(Get("/v1/checkpoints").body.find(ck_id), std::string::npos);

  v1::CreateRunRequest req;
  req.mutable_spec()->set_checkpoint_id(ck_id);
  req.mutable_spec()->set_dataset("builtin");
  (*req.mutable_spec()->mutable_labels())["serving"] = "bf16";
  req.set_samples_jsonl(BuiltinSamples() + "{broken line\n");
  auto created = Post("/v1/runs", Json(req));
  ASSERT_EQ(created.status, 201) << created.body;
  v1::Run run = Parse<v1::Run>(created.body);
  EXPECT_EQ(run.samples_total(), 84);
  EXPECT_EQ(run.input_errors_size(), 1);
  run = WaitForRun(run.id());
  ASSERT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
  EXPECT_EQ(run.samples_done(), 84);
  EXPECT_NEAR(run.summary().pass_at().at("1"), 0.5, 1e-9);
  EXPECT_NEAR(run.summary().pass_at().at("5"), 1.0, 1e-9);
  EXPECT_EQ(run.problems_size(), 14);

  // Paged samples cover every sample exactly once.
  std::set<std::string> seen;
  std::string token;
  int pages = 0;
  do {
    auto page = Parse<v1::ListSamplesResponse>(
        Get("/v1/runs/" + run.id() + "/samples?page_size=25&page_token=" + token).body);
    for (const auto& s : page.samples()) {
      EXPECT_TRUE(s.graded());
      EXPECT_FALSE(s.result().verdict().empty());
      EXPECT_TRUE(seen.insert(s.problem() + "#" + std::to_string(s.index())).second);
    }
    token = page.next_page_token();
    ++pages;
  } while (!token.empty() && pages < 20);
  EXPECT_EQ(seen.size(), 84u);
  EXPECT_EQ(pages, 4);

  // Filters.
  EXPECT_NE(Get("/v1/runs?checkpoint=" + ck_id).body.find(run.id()), std::string::npos);
  EXPECT_EQ(Get("/v1/runs?label=serving=int4").body.find(run.id()), std::string::npos);
  EXPECT_NE(Get("/v1/runs?label=serving=bf16").body.find(run.id()), std::string::npos);
  // The checkpoint's labels are the run's too.
  EXPECT_NE(Get("/v1/runs?label=team=rtl").body.find(run.id()), std::string::npos);
  EXPECT_EQ(run.spec().labels().at("team"), "rtl");

  // A second run of the same code is answered by the verdict cache.
  auto before = Get("/metrics").body;
  std::string second = CreateRun(BuiltinSamples());
  ASSERT_EQ(WaitForRun(second).state(), v1::SUCCEEDED);
  auto after = Get("/metrics").body;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(after, m, std::regex("evald_cache_hits_total (\\d+)")));
  EXPECT_GE(std::stoi(m[1].str()), 70) << after;
  EXPECT_NE(after.find("evald_queue_depth 0"), std::string::npos);

  // Compare and the report.
  auto cmp = Parse<v1::Comparison>(Get("/v1/compare?a=" + run.id() + "&b=" + second).body);
  EXPECT_EQ(cmp.shared_problems(), 14);
  ASSERT_GE(cmp.ks_size(), 1);
  EXPECT_NEAR(cmp.ks(0).delta(), 0.0, 1e-12);
  auto report = Get("/v1/runs/" + run.id() + "/report");
  EXPECT_EQ(report.status, 200);

  for (const char* f : {"json", "csv", "markdown", "html"}) {
    auto lb = Get(std::string("/v1/leaderboard?format=") + f);
    EXPECT_EQ(lb.status, 200) << f;
    EXPECT_NE(lb.body.find("gemma-31b-lora"), std::string::npos) << f;
  }
  EXPECT_NE(Get("/v1/leaderboard?format=csv").content_type.find("text/csv"), std::string::npos);

  EXPECT_EQ(daemon_.Stop(SIGTERM), 0);  // graceful shutdown

  // With the daemon stopped, the command line reads its runs by id.
  auto run_cmd = [](const std::string& args) {
    auto r = testing::RunShell(std::string(EVALD_BINARY) + " " + args + " 2>&1");
    return std::make_pair(r.exit_code, r.output);
  };
  auto [cmp_rc, cmp_out] =
      run_cmd("compare " + run.id() + " " + second + " --data " + dir_ + "/store");
  EXPECT_EQ(cmp_rc, 0) << cmp_out;
  EXPECT_NE(cmp_out.find("no significant difference"), std::string::npos) << cmp_out;
  auto [gate_rc, gate_out] = run_cmd("gate --report " + second + " --baseline " + run.id() +
                                     " --min 'pass@1>=0.4' --data " + dir_ + "/store");
  EXPECT_EQ(gate_rc, 0) << gate_out;
  auto [exp_rc, exp_out] = run_cmd("export --data " + dir_ + "/store --format markdown");
  EXPECT_EQ(exp_rc, 0) << exp_out;
  EXPECT_NE(exp_out.find("gemma-31b-lora"), std::string::npos) << exp_out;
}

// Planning, tiers and the train-vs-serve report through the API.
TEST_F(DaemonTest, PlanTiersAndTrainServeReport) {
  StartDaemon();
  const std::string a = CreateRun(BuiltinSamples(), R"({"model":"gemma","serve":"gpu"})");
  const std::string b = CreateRun(BuiltinSamples(), R"({"model":"gemma","serve":"tpu"})");
  ASSERT_EQ(WaitForRun(a).state(), v1::SUCCEEDED);
  ASSERT_EQ(WaitForRun(b).state(), v1::SUCCEEDED);

  auto plan = Post("/v1/plan",
                   R"({"pass_at_1":0.641,"problems":156,"delta":0.056,"simulations":50})", kRead);
  ASSERT_EQ(plan.status, 200) << plan.body;
  auto parsed = Parse<v1::PowerPlan>(plan.body);
  ASSERT_EQ(parsed.answers_size(), 2);
  EXPECT_GT(parsed.answers(0).samples_needed(), 0);
  auto from_runs = Post("/v1/plan",
                        "{\"run_a\":\"" + a + "\",\"run_b\":\"" + b +
                            "\",\"delta\":0.1,"
                            "\"simulations\":50}",
                        kRead);
  EXPECT_EQ(from_runs.status, 200) << from_runs.body;
  EXPECT_EQ(Post("/v1/plan", "{}", kRead).status, 400);
  EXPECT_EQ(Post("/v1/plan", R"({"run_a":"run-nope"})", kRead).status, 404);

  auto board = Get("/v1/leaderboard?format=json&label=model=gemma");
  ASSERT_EQ(board.status, 200);
  auto lb = Parse<v1::Leaderboard>(board.body);
  ASSERT_EQ(lb.rows_size(), 2);
  EXPECT_EQ(lb.rows(0).tier(), 1);
  EXPECT_EQ(lb.rows(1).tier(), 1);  // the same samples: indistinguishable
  EXPECT_EQ(lb.pairs_size(), 1);

  auto json = Get("/v1/reports/train-serve?label=model=gemma&baseline=" + a);
  ASSERT_EQ(json.status, 200) << json.body;
  auto report = Parse<v1::TrainServeReport>(json.body);
  ASSERT_EQ(report.variants_size(), 2);
  EXPECT_EQ(report.baseline(), a);
  EXPECT_GE(report.categories_size(), 2);
  auto html = Get("/v1/reports/train-serve?label=model=gemma&format=html");
  EXPECT_EQ(html.status, 200);
  EXPECT_NE(html.content_type.find("text/html"), std::string::npos);
  EXPECT_EQ(Get("/v1/reports/train-serve?label=model=none").status, 404);
  EXPECT_EQ(Get("/v1/reports/train-serve?label=model=gemma&format=pdf").status, 400);
}

TEST_F(DaemonTest, ConcurrentSubmissionsAndCancel) {
  StartDaemon();
  std::vector<std::string> ids(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      std::string jsonl;
      // Distinct code per submission: each run simulates on its own.
      std::string good =
          "module TopModule(input a, input b, output out); assign out = a & b; endmodule";
      for (int j = 0; j < 3; ++j)
        jsonl += "{\"problem\": \"Bi01_and_gate\", \"code\": \"" + good + " // s" +
                 std::to_string(i) + "-" + std::to_string(j) + "\"}\n";
      v1::CreateRunRequest req;
      req.mutable_spec()->set_dataset("builtin");
      req.set_samples_jsonl(jsonl);
      auto r = Post("/v1/runs", Json(req));
      if (r.status == 201) ids[i] = Parse<v1::Run>(r.body).id();
    });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> unique(ids.begin(), ids.end());
  EXPECT_EQ(unique.size(), 4u);
  for (const auto& id : ids) {
    ASSERT_FALSE(id.empty());
    v1::Run run = WaitForRun(id);
    EXPECT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
    EXPECT_EQ(run.summary().categories().at("."), 3);
  }
  // Cancel a queued run: behind a long one it has not started yet.
  std::string slow = CreateRun(BuiltinSamples());
  std::string queued = CreateRun(BuiltinSamples());
  auto c = Post("/v1/runs/" + queued + "/cancel", "{\"reason\": \"superseded\"}");
  EXPECT_EQ(c.status, 202) << c.body;
  v1::Run cancelled = WaitForRun(queued);
  EXPECT_EQ(cancelled.state(), v1::CANCELLED);
  EXPECT_EQ(cancelled.state_reason(), "superseded");
  EXPECT_EQ(Post("/v1/runs/" + queued + "/cancel", "{}").status, 400);  // already ended
  EXPECT_EQ(WaitForRun(slow).state(), v1::SUCCEEDED);
}

TEST(OpenApi, DescribesEveryRoute) {
  auto text = ReadFileBounded(testing::SourceDir() + "/docs/openapi.yaml");
  ASSERT_TRUE(text.ok());
  for (const std::string& route : Api::Routes()) {
    std::string method = route.substr(0, route.find(' ')), path = route.substr(route.find(' ') + 1);
    for (char& c : method) c = static_cast<char>(std::tolower(c));
    size_t at = text->find("\n  " + path + ":\n");
    ASSERT_NE(at, std::string::npos) << path << " is not in docs/openapi.yaml";
    size_t next = text->find("\n  /", at + 3);
    std::string block = text->substr(at, next == std::string::npos ? std::string::npos : next - at);
    EXPECT_NE(block.find("\n    " + method + ":"), std::string::npos) << route;
  }
}

}  // namespace
}  // namespace evald
