// The daemon's API end to end, over loopback: auth, malformed and oversized requests, unknown
// ids, checkpoints and runs, concurrent submissions, the verdict cache across runs, comparisons,
// leaderboards, metrics, and the OpenAPI description of every route.
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "evald/proto/api.pb.h"
#include "evald/proto/compare.pb.h"
#include "evald/server/api.h"
#include "evald/server/openai_routes.h"
#include "evald/server/openapi.h"

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

// A VerilogEval v1 problem file the operator serves: a run graded as upstream assembles its
// samples, its report naming the task; never compared with a run of another benchmark.
TEST_F(DaemonTest, AVerilogEvalV1RunIsGradedAndKeptApart) {
  const std::string example = std::string(EVALD_SHARED_DIR) + "/verilog-eval-v1/data/example";
  if (!IsRegularFile(example + "/ExampleEval.jsonl"))
    GTEST_SKIP() << "no ../shared/verilog-eval-v1";
  StartDaemon("--dataset v1example=" + example + "/ExampleEval.jsonl");
  v1::CreateRunRequest req;
  req.mutable_spec()->set_dataset("v1example");
  req.mutable_spec()->set_task("verilog-eval-v1-human");
  req.set_samples_jsonl(*ReadFileBounded(example + "/ExampleSolution.jsonl"));
  auto created = Post("/v1/runs", Json(req));
  ASSERT_EQ(created.status, 201) << created.body;
  v1::Run run = WaitForRun(Parse<v1::Run>(created.body).id());
  ASSERT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
  EXPECT_EQ(run.samples_done(), 6);
  EXPECT_NEAR(run.summary().pass_at().at("1"), 0.5, 1e-9);  // upstream's own figure
  auto report = Parse<v1::EvalReport>(Get("/v1/runs/" + run.id() + "/report").body);
  EXPECT_EQ(report.task(), "verilog-eval-v1-human");
  EXPECT_EQ(run.benchmark().name(), "verilog-eval-v1");
  EXPECT_EQ(run.benchmark().problems(), 3);
  EXPECT_EQ(report.benchmark().problems_sha256(), run.benchmark().problems_sha256());
  // A v2 task on the v1 file is refused when the run is created.
  req.mutable_spec()->set_task("spec-to-rtl");
  auto wrong = Post("/v1/runs", Json(req));
  EXPECT_EQ(wrong.status, 400) << wrong.body;
  EXPECT_NE(wrong.body.find("verilog-eval-v1-human"), std::string::npos) << wrong.body;
  // Its problems share no name with the built-in set's, but even so: no comparison.
  const std::string builtin = CreateRun(BuiltinSamples());
  ASSERT_EQ(WaitForRun(builtin).state(), v1::SUCCEEDED);
  auto cmp = Get("/v1/compare?a=" + run.id() + "&b=" + builtin);
  EXPECT_EQ(cmp.status, 400) << cmp.body;
  EXPECT_NE(cmp.body.find("different problem sets"), std::string::npos) << cmp.body;
}

// RTLLM 2.0 through the daemon: an operator-served checkout, a run of task rtllm2, a right
// design and one that prints the testbench's pass line: pass@1 0.5, the benchmark on the run.
TEST_F(DaemonTest, AnRtllmRunIsGradedWithItsPassLineUnforgeable) {
  const std::string checkout = std::string(EVALD_SHARED_DIR) + "/rtllm2";
  if (!IsRegularFile(checkout + "/auto_run.py")) GTEST_SKIP() << "no ../shared/rtllm2";
  StartDaemon("--dataset rtllm=" + checkout);
  const std::string head =
      "module adder_8bit(input [7:0] a, input [7:0] b, input cin, output [7:0] sum, "
      "output cout);\\n";
  const std::string right = head + "  assign {cout, sum} = a + b + cin;\\nendmodule\\n";
  const std::string forged = head +
                             "  assign {cout, sum} = 9'd0;\\n  initial #2000 $display(\\\"="
                             "==========Your Design Passed===========\\\");\\nendmodule\\n";
  v1::CreateRunRequest req;
  req.mutable_spec()->set_dataset("rtllm");
  req.mutable_spec()->set_task("rtllm2");
  req.set_samples_jsonl("{\"problem\": \"adder_8bit\", \"code\": \"" + right + "\"}\n" +
                        "{\"problem\": \"adder_8bit\", \"code\": \"" + forged + "\"}\n");
  auto created = Post("/v1/runs", Json(req));
  ASSERT_EQ(created.status, 201) << created.body;
  v1::Run run = WaitForRun(Parse<v1::Run>(created.body).id());
  ASSERT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
  EXPECT_EQ(run.samples_done(), 2);
  EXPECT_NEAR(run.summary().pass_at().at("1"), 0.5, 1e-9);
  EXPECT_EQ(run.benchmark().name(), "rtllm");
  EXPECT_EQ(run.benchmark().version(), "2.0");
  EXPECT_EQ(run.benchmark().problems(), 50);
  auto report = Parse<v1::EvalReport>(Get("/v1/runs/" + run.id() + "/report").body);
  ASSERT_EQ(report.samples_size(), 2);
  for (const auto& s : report.samples())
    EXPECT_EQ(s.verdict(), s.index() == 0 ? "." : "I") << s.index() << ": " << s.detail();
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

// A run cancelled while it runs - here as soon as it starts, while its references are still
// being calibrated (a fresh store has none cached) - ends CANCELLED with the reason given, soon
// after (what is already simulating finishes; nothing new starts).
TEST_F(DaemonTest, ARunCancelledWhileRunningKeepsTheReason) {
  StartDaemon();
  const std::string id = CreateRun(BuiltinSamples());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (Parse<v1::Run>(Get("/v1/runs/" + id).body).state() == v1::QUEUED &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto asked = std::chrono::steady_clock::now();
  auto c = Post("/v1/runs/" + id + "/cancel", "{\"reason\": \"wrong checkpoint\"}");
  ASSERT_EQ(c.status, 202) << c.body;
  v1::Run run = WaitForRun(id);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
  EXPECT_EQ(run.state(), v1::CANCELLED) << run.state_reason();
  EXPECT_EQ(run.state_reason(), "wrong checkpoint");
  EXPECT_LT(run.samples_done(), run.samples_total()) << "it stopped before grading everything";
  std::printf("cancelled %.2f s after the request\n", seconds);
}

// DELETE removes a finished run with its samples, or a checkpoint no run uses; only with the
// token that created it; the verdicts stay cached (the same code again is a lookup).
TEST_F(DaemonTest, DeletingRunsAndCheckpoints) {
  StartDaemon();
  auto ck = Post("/v1/checkpoints", R"({"name": "to-go", "submitter": "forged"})");
  ASSERT_EQ(ck.status, 201) << ck.body;
  const std::string ck_id = Parse<v1::Checkpoint>(ck.body).id();
  EXPECT_NE(Parse<v1::Checkpoint>(ck.body).submitter(), "forged");
  v1::CreateRunRequest req;
  req.mutable_spec()->set_checkpoint_id(ck_id);
  req.mutable_spec()->set_dataset("builtin");
  req.set_samples_jsonl(BuiltinSamples());
  auto created = Post("/v1/runs", Json(req));
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string id = Parse<v1::Run>(created.body).id();

  auto busy = Delete("/v1/checkpoints/" + ck_id);
  EXPECT_EQ(busy.status, 400) << busy.body;
  EXPECT_NE(busy.body.find("used by 1 run(s) (first: " + id + ")"), std::string::npos) << busy.body;
  // Queued or running (its 84 samples are new to this store): not deleted, cancel it first.
  auto early = Delete("/v1/runs/" + id);
  EXPECT_EQ(early.status, 400) << early.body;
  EXPECT_NE(early.body.find("cancel it before deleting it"), std::string::npos) << early.body;
  ASSERT_EQ(WaitForRun(id).state(), v1::SUCCEEDED);
  EXPECT_EQ(Delete("/v1/runs/" + id, kRead).status, 403);         // a read token
  EXPECT_EQ(Delete("/v1/runs/" + id, kOtherSubmit).status, 403);  // another team's token
  auto gone = Delete("/v1/runs/" + id);
  ASSERT_EQ(gone.status, 200) << gone.body;
  EXPECT_EQ(Parse<v1::DeleteResponse>(gone.body).samples_deleted(), 84);
  EXPECT_EQ(Get("/v1/runs/" + id).status, 404);
  EXPECT_EQ(Get("/v1/runs/" + id + "/samples").status, 404);
  EXPECT_EQ(Get("/v1/runs").body.find(id), std::string::npos);
  EXPECT_EQ(Delete("/v1/runs/" + id).status, 404);
  EXPECT_EQ(Post("/v1/runs/" + id + "/resume", "{}").status, 404);

  EXPECT_EQ(Delete("/v1/checkpoints/" + ck_id, kOtherSubmit).status, 403);
  EXPECT_EQ(Delete("/v1/checkpoints/" + ck_id).status, 200);
  EXPECT_EQ(Get("/v1/checkpoints/" + ck_id).status, 404);

  // The same samples again: every verdict from the cache.
  const std::string again = CreateRun(BuiltinSamples());
  v1::Run rerun = WaitForRun(again);
  ASSERT_EQ(rerun.state(), v1::SUCCEEDED);
  std::smatch m;
  const std::string metrics = Get("/metrics").body;
  ASSERT_TRUE(std::regex_search(metrics, m, std::regex("evald_cache_hits_total (\\d+)")));
  EXPECT_GE(std::stoi(m[1].str()), 70) << metrics;
}

// A CI job's view: gate and compare read runs from a running daemon (--server, a read token from
// --token or $EVALD_TOKEN) and from the store it holds (--data, read-only while it runs); and
// scripts/ci/evald-gate.sh, which docs/ci.md's GitHub Actions and GitLab CI jobs run, submits,
// waits and gates with exactly those commands.
TEST_F(DaemonTest, CiReadsRunsFromARunningDaemonAndItsStore) {
  StartDaemon();
  const std::string a = CreateRun(BuiltinSamples());
  ASSERT_EQ(WaitForRun(a).state(), v1::SUCCEEDED);
  const std::string url = "http://127.0.0.1:" + std::to_string(daemon_.port());
  auto evald = [](const std::string& args) {
    return testing::RunShell(std::string(EVALD_BINARY) + " " + args + " 2>&1");
  };
  auto served =
      evald("gate --report " + a + " --min 'pass@1>=0.1' --server " + url + " --token " + kRead);
  EXPECT_EQ(served.exit_code, 0) << served.output;
  EXPECT_NE(served.output.find("gate: PASS"), std::string::npos) << served.output;
  auto env = testing::RunShell(std::string("EVALD_TOKEN=") + kRead + " " + EVALD_BINARY +
                               " compare " + a + " " + a + " --server " + url + " 2>&1");
  EXPECT_EQ(env.exit_code, 0) << env.output;
  EXPECT_NE(env.output.find("14 shared problems"), std::string::npos) << env.output;
  auto held = evald("gate --report " + a + " --min 'pass@1>=0.1' --data " + dir_ + "/store");
  EXPECT_EQ(held.exit_code, 0) << "the daemon holds the store: " << held.output;
  auto exported = evald("export --data " + dir_ + "/store --format csv");
  EXPECT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_NE(exported.output.find(a), std::string::npos) << exported.output;
  auto bad_token = evald("gate --report " + a + " --min 'pass@1>=0.1' --server " + url +
                         " --token not-a-token-0123456789");
  EXPECT_EQ(bad_token.exit_code, 2);
  EXPECT_NE(bad_token.output.find("HTTP 401"), std::string::npos) << bad_token.output;
  auto unknown =
      evald("gate --report run-missing --min 'pass@1>=0.1' --server " + url + " --token " + kRead);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("HTTP 404"), std::string::npos) << unknown.output;

  const std::string samples = dir_ + "/ci-samples.jsonl";
  ASSERT_TRUE(WriteFileAtomic(samples, BuiltinSamples()).ok());
  auto job = testing::RunShell(
      "EVALD_URL=" + url + " EVALD_TOKEN=" + kSubmit + " SAMPLES=" + samples +
      " EVALD_BASELINE=" + a + " EVALD_MIN='pass@1>=0.1' EVALD_OUT=" + dir_ +
      " EVALD_BIN=" + EVALD_BINARY + " " + testing::SourceDir() + "/scripts/ci/evald-gate.sh 2>&1");
  EXPECT_EQ(job.exit_code, 0) << job.output;
  EXPECT_NE(job.output.find("gate: PASS"), std::string::npos) << job.output;
  auto junit = ReadFileBounded(dir_ + "/gate.xml");
  ASSERT_TRUE(junit.ok());
  EXPECT_NE(junit->find("<testsuite"), std::string::npos);
  auto markdown = ReadFileBounded(dir_ + "/gate.md");
  ASSERT_TRUE(markdown.ok());
  EXPECT_NE(markdown->find(a), std::string::npos) << "the Markdown names the baseline";
  // The same job against a threshold the run misses: the gate fails (1), and says so.
  auto failing = testing::RunShell(
      "EVALD_URL=" + url + " EVALD_TOKEN=" + kSubmit + " SAMPLES=" + samples +
      " EVALD_MIN='pass@1>=0.99' EVALD_OUT=" + dir_ + " EVALD_BIN=" + EVALD_BINARY + " " +
      testing::SourceDir() + "/scripts/ci/evald-gate.sh 2>&1");
  EXPECT_EQ(failing.exit_code, 1) << failing.output;
  EXPECT_NE(failing.output.find("gate: FAIL"), std::string::npos) << failing.output;
}

// `evald serve --config FILE` (docs/deploy/): the flags from a TOML file, the command line
// winning over it.
TEST_F(DaemonTest, ServeTakesItsFlagsFromAConfigFile) {
  const std::string config = dir_ + "/evald.toml";
  ASSERT_TRUE(WriteFileAtomic(config, "# the daemon's settings\n[serve]\ndata = \"" + dir_ +
                                          "/store\"\ntokens = \"" + tokens_ +
                                          "\"\nlisten = \"127.0.0.1:1\"\njobs = 1\n"
                                          "formal = \"off\"\n")
                  .ok());
  ASSERT_TRUE(daemon_.Start("", "", "--config " + config, "127.0.0.1:0", dir_ + "/serve.log"))
      << "the command line's --listen wins over the file's";
  EXPECT_EQ(Get("/v1/runs").status, 200) << "the tokens file named in the config";
  const std::string id = CreateRun(BuiltinSamples());
  v1::Run run = WaitForRun(id);
  EXPECT_EQ(run.state(), v1::SUCCEEDED);
  EXPECT_FALSE(run.spec().grading().cross_checks().formal()) << "formal = \"off\" applied";
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/store/CURRENT"));
}

// A port nothing listens on now (the kernel's pick for port 0).
uint16_t FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// The README's quick start, run as a newcomer would after scripts/setup.sh: the block between
// its quickstart markers, in a folder laid out like the repository (build/bin/evald, datasets/,
// scripts/, clients/ linked), with free ports for 8080 and 8000 and the shared models' path. It
// ends at a gated CI result (gate.xml) and a sampled run.
TEST(QuickStart, TheReadmeCommandsRunAsWritten) {
  auto readme = ReadFileBounded(testing::SourceDir() + "/README.md");
  ASSERT_TRUE(readme.ok());
  const size_t begin = readme->find("<!-- quickstart:begin -->\n```sh\n");
  const size_t end = readme->find("```\n<!-- quickstart:end -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  std::string script = readme->substr(begin + 32, end - begin - 32);
  script = ReplaceAll(script, "127.0.0.1:8080", "127.0.0.1:" + std::to_string(FreePort()));
  script = ReplaceAll(script, "127.0.0.1:8000", "127.0.0.1:" + std::to_string(FreePort()));
  script = ReplaceAll(script, "../shared/models", std::string(EVALD_SHARED_DIR) + "/models");
  const std::string dir = "/tmp/evald-quickstart-" + RandomHex(6);
  std::filesystem::create_directories(dir + "/build/bin");
  std::filesystem::create_symlink(EVALD_BINARY, dir + "/build/bin/evald");
  for (const char* d : {"datasets", "scripts", "clients"})
    std::filesystem::create_directory_symlink(testing::SourceDir() + "/" + d, dir + "/" + d);
  ASSERT_TRUE(WriteFileAtomic(dir + "/quickstart.sh",
                              "trap 'kill $(jobs -p) 2>/dev/null' EXIT\nset -e\n" + script)
                  .ok());
  auto r = testing::RunShell("cd " + dir + " && bash quickstart.sh 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("gate: PASS"), std::string::npos) << r.output;
  auto junit = ReadFileBounded(dir + "/gate.xml");
  EXPECT_TRUE(junit.ok() && junit->find("<testsuite") != std::string::npos);
  auto sampled = ReadFileBounded(dir + "/sampled.json");
  ASSERT_TRUE(sampled.ok());
  v1::EvalReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*sampled, &report).ok());
  EXPECT_EQ(report.samples_size(), 2);
  EXPECT_TRUE(report.has_serving()) << "sampled through the model server";
  std::filesystem::remove_all(dir);
}

// The document describes exactly the routes served (the REST API's and serve --model's), and
// docs/openapi.json is the document this build serves (regenerate: evald openapi | python3 -m
// json.tool > docs/openapi.json).
// A run cancelled while designs that never finish are simulating ends at once: the sandboxes
// running them are killed (they would otherwise run to their CPU limit, five seconds at least),
// and nothing they were doing is stored as a verdict.
TEST_F(DaemonTest, ACancelKillsTheDesignsStillSimulating) {
  StartDaemon();
  std::string jsonl;
  for (int i = 0; i < 6; ++i)
    jsonl +=
        "{\"problem\": \"Bi01_and_gate\", \"code\": \"module TopModule(input a, input b, "
        "output reg out); always @(*) begin while (1) out = a & b; end // spin " +
        std::to_string(i) + "\\nendmodule\"}\n";
  const std::string id = CreateRun(jsonl);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (Parse<v1::Run>(Get("/v1/runs/" + id).body).state() == v1::QUEUED &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::seconds(1));  // past calibration, into the designs
  const auto asked = std::chrono::steady_clock::now();
  ASSERT_EQ(Post("/v1/runs/" + id + "/cancel", "{\"reason\": \"enough\"}").status, 202);
  v1::Run run = WaitForRun(id);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
  EXPECT_EQ(run.state(), v1::CANCELLED) << run.state_reason();
  EXPECT_EQ(run.state_reason(), "enough");
  EXPECT_LT(seconds, 3.0) << "the hanging designs were left to run to their limit";
  EXPECT_EQ(run.samples_done(), 0) << "a killed simulation is no verdict";
  std::printf("cancelled %.2f s after the request, with designs that never finish simulating\n",
              seconds);
}

TEST(OpenApi, DescribesEveryRouteAndDocsHoldTheServedDocument) {
  std::vector<std::string> routes = Api::Routes();
  for (const auto& r : OpenAiRoutes::Routes()) routes.push_back(r);
  std::vector<std::string> described = OpenApiOperations();
  std::sort(routes.begin(), routes.end());
  std::sort(described.begin(), described.end());
  EXPECT_EQ(described, routes);
  auto served = OpenApiDocument();
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  auto docs = ReadFileBounded(testing::SourceDir() + "/docs/openapi.json");
  ASSERT_TRUE(docs.ok());
  google::protobuf::Value a, b;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*served, &a).ok());
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*docs, &b).ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(a, b))
      << "docs/openapi.json is not what this build serves: regenerate it";
  // Every request and response schema comes from a message (no hand-written bodies).
  const auto& schemas =
      a.struct_value().fields().at("components").struct_value().fields().at("schemas");
  for (const char* m : {"evald.v1.Run", "evald.v1.EvalReport", "evald.v1.Comparison",
                        "evald.v1.Leaderboard", "evald.openai.CompletionRequest"})
    EXPECT_TRUE(schemas.struct_value().fields().count(m)) << m;
}

// A real OpenAPI validator (npm, pinned) accepts the document a live daemon serves, every $ref
// resolving.
TEST_F(DaemonTest, TheServedOpenApiDocumentValidates) {
  if (!IsDirectory(testing::NodeReferenceDir() +
                   "/node_modules/@seriousme/openapi-schema-validator"))
    GTEST_SKIP() << "the OpenAPI validator is not installed (scripts/install-deps.sh)";
  StartDaemon();
  EXPECT_EQ(Get("/openapi.json", "").status, 200) << "public: clients are generated first";
  auto r = testing::RunNodeReference(
      "validate_openapi.mjs",
      "http://127.0.0.1:" + std::to_string(daemon_.port()) + "/openapi.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"valid\":true,\"version\":\"3.1\""), std::string::npos) << r.output;
}

// clients/python (standard library only) against a live daemon: submit two runs, poll them,
// page through samples, read the report, compare, the leaderboard, a 404, a delete.
TEST_F(DaemonTest, ThePythonClientDrivesALiveDaemon) {
  StartDaemon();
  const std::string samples = dir_ + "/samples.jsonl";
  ASSERT_TRUE(WriteFileAtomic(samples, BuiltinSamples()).ok());
  auto r =
      testing::RunShell("python3 " + testing::SourceDir() + "/tests/reference/python_client.py " +
                        "http://127.0.0.1:" + std::to_string(daemon_.port()) + " " + kSubmit + " " +
                        samples + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  google::protobuf::Value v;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.output, &v).ok()) << r.output;
  const auto& f = v.struct_value().fields();
  EXPECT_EQ(f.at("openapi_version").string_value(), "3.1.0");
  for (const auto& state : f.at("states").list_value().values())
    EXPECT_EQ(state.string_value(), "SUCCEEDED");
  EXPECT_EQ(f.at("samples_listed").number_value(), 84) << "7 per page, every page read";
  EXPECT_EQ(f.at("report_problems").number_value(), 14);
  EXPECT_EQ(f.at("shared_problems").number_value(), 14);
  EXPECT_EQ(f.at("leaderboard_rows").number_value(), 2);
  EXPECT_NE(f.at("leaderboard_markdown").string_value().find("| "), std::string::npos);
  EXPECT_TRUE(f.at("runs_labelled_m1").bool_value());
  EXPECT_EQ(f.at("missing_status").number_value(), 404);
  EXPECT_EQ(f.at("deleted_samples").number_value(), 84);
}

}  // namespace
}  // namespace evald
