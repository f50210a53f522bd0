// The daemon end to end, over loopback: auth, malformed and oversized requests, unknown ids,
// checkpoints and runs, concurrent submissions, the verdict cache across runs, comparisons,
// leaderboards, graceful shutdown, and a kill -9 in the middle of a run.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "base/file_io.h"
#include "base/hash.h"
#include "daemon_client.h"
#include "evald/proto/compare.pb.h"
#include "evald/proto/store.pb.h"
#include "evald/server/api.h"
#include "test_support.h"

namespace evald {
namespace {

using testing::Daemon;
using testing::Http;

const char* kRead = "read-token-0123456789abcdef";
const char* kSubmit = "submit-token-0123456789abcdef";

template <typename M>
M Parse(const std::string& json) {
  M m;
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = true;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &m, opts).ok())
      << json.substr(0, 500);
  return m;
}

std::string Json(const google::protobuf::Message& m) {
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(m, &out);
  return out;
}

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/tmp/evald-daemon-test-" + RandomHex(6);
    std::filesystem::create_directories(dir_);
    tokens_ = dir_ + "/tokens";
    ASSERT_TRUE(WriteFileAtomic(tokens_, std::string("# test tokens\n") + kRead + " read\n" +
                                             kSubmit + " submit\n")
                    .ok());
  }
  void TearDown() override {
    daemon_.Stop(SIGKILL);
    std::filesystem::remove_all(dir_);
  }
  void StartDaemon(const std::string& extra = "") {
    ASSERT_TRUE(daemon_.Start(dir_ + "/store", tokens_, extra)) << "daemon did not start";
  }
  testing::HttpResult Get(const std::string& target, const char* token = kRead) {
    return Http(daemon_.port(), "GET", target, token);
  }
  testing::HttpResult Post(const std::string& target, const std::string& body,
                           const char* token = kSubmit) {
    return Http(daemon_.port(), "POST", target, token, body);
  }
  std::string CreateRun(const std::string& jsonl, const std::string& labels = "{}") {
    v1::CreateRunRequest req;
    req.mutable_spec()->set_dataset("builtin");
    req.set_samples_jsonl(jsonl);
    std::string body = Json(req);
    if (labels != "{}") body.insert(body.find("\"spec\":{") + 8, "\"labels\":" + labels + ",");
    auto r = Post("/v1/runs", body);
    EXPECT_EQ(r.status, 201) << r.body;
    return Parse<v1::Run>(r.body).id();
  }
  v1::Run WaitForRun(const std::string& id, int timeout_s = 120) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    v1::Run run;
    while (std::chrono::steady_clock::now() < deadline) {
      run = Parse<v1::Run>(Get("/v1/runs/" + id).body);
      if (run.state() == v1::SUCCEEDED || run.state() == v1::FAILED || run.state() == v1::CANCELLED)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return run;
  }
  static std::string BuiltinSamples() {
    return *ReadFileBounded(testing::BuiltinDataset() + "/samples_spec-to-rtl.jsonl");
  }

  std::string dir_, tokens_;
  Daemon daemon_;
};

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
    FILE* p = ::popen((std::string(EVALD_BINARY) + " " + args + " 2>&1").c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    int status = ::pclose(p);
    return std::make_pair(WEXITSTATUS(status), out);
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

TEST_F(DaemonTest, KillDashNineMidRunResumesWithEverySampleCountedOnce) {
  StartDaemon();
  // 14 problems x 20 distinct variants: enough simulations to be interrupted.
  std::string jsonl;
  std::ifstream in(testing::BuiltinDataset() + "/samples_spec-to-rtl.jsonl");
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  int expected_pass = 0, total = 0;
  for (int v = 0; v < 4; ++v) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i % 6 != 0 && i % 6 != 2) continue;  // a right and a wrong sample per problem
      std::string l = lines[i];
      // Make the code distinct without changing its meaning: a comment line before [DONE].
      l.replace(l.rfind("[DONE]"), 6, "// v" + std::to_string(v) + "\\n[DONE]");
      jsonl += l + "\n";
      ++total;
      if (i % 6 == 0) ++expected_pass;
    }
  }
  std::string id = CreateRun(jsonl);
  // Wait until part of it is graded, then kill the daemon without warning.
  for (int i = 0; i < 600; ++i) {
    auto run = Parse<v1::Run>(Get("/v1/runs/" + id).body);
    if (run.samples_done() >= 10) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto mid = Parse<v1::Run>(Get("/v1/runs/" + id).body);
  EXPECT_LT(mid.samples_done(), total) << "the run finished before it could be interrupted";
  EXPECT_EQ(daemon_.Stop(SIGKILL), 128 + SIGKILL);

  StartDaemon();
  v1::Run run = WaitForRun(id);
  ASSERT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
  EXPECT_EQ(run.samples_total(), total);
  EXPECT_EQ(run.samples_done(), total);
  EXPECT_EQ(run.summary().samples(), total);
  EXPECT_EQ(run.summary().categories().at("."), expected_pass);
  auto page =
      Parse<v1::ListSamplesResponse>(Get("/v1/runs/" + id + "/samples?page_size=1000").body);
  EXPECT_EQ(page.samples_size(), total);
  for (const auto& s : page.samples()) EXPECT_TRUE(s.graded());
}

// A sample that kills the daemon every time it is graded (fault injection standing in for a
// crashing tool) must not crash-loop it: a supervisor restarts the daemon, the sample gets '!'
// after two deaths, every other sample is graded as usual, and the run finishes.
TEST_F(DaemonTest, ASampleThatKillsTheDaemonIsGradedBangAndTheRunFinishes) {
  const char* kPoison = "EVALD_TEST_POISON_7f3a";
  ::setenv("EVALD_FAULT_CRASH_ON_CODE", kPoison, 1);
  std::string jsonl;
  int total = 0, expected_pass = 0;
  std::istringstream in(BuiltinSamples());
  std::string line;
  for (int i = 0; std::getline(in, line); ++i) {
    if (i % 6 != 0) continue;  // the right sample of each problem
    jsonl += line + "\n";
    ++total;
    ++expected_pass;
  }
  jsonl +=
      R"({"problem": "Bi01_and_gate", "code": "module TopModule(input a, input b, output out);)"
      R"( // EVALD_TEST_POISON_7f3a\n assign out = a & b;\nendmodule\n"})"
      "\n";
  ++total;
  StartDaemon("--jobs 2");
  std::string id = CreateRun(jsonl);
  int deaths = 0;
  v1::Run run;
  for (int restarts = 0; restarts < 6; ++restarts) {
    // Supervise: wait for the run to finish or the daemon to die, restart it when it died.
    bool died = false;
    for (int i = 0; i < 1200; ++i) {
      auto r = Get("/v1/runs/" + id);
      if (r.status != 200) {
        died = true;
        break;
      }
      run = Parse<v1::Run>(r.body);
      if (run.state() == v1::SUCCEEDED || run.state() == v1::FAILED) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!died) break;
    ++deaths;
    daemon_.Stop(SIGKILL);  // reaps the aborted process
    StartDaemon("--jobs 2");
  }
  ::unsetenv("EVALD_FAULT_CRASH_ON_CODE");
  EXPECT_EQ(deaths, 2);
  ASSERT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
  EXPECT_EQ(run.samples_done(), total);
  EXPECT_EQ(run.summary().categories().at("."), expected_pass);  // nothing else was blamed
  auto page =
      Parse<v1::ListSamplesResponse>(Get("/v1/runs/" + id + "/samples?page_size=1000").body);
  int bang = 0;
  for (const auto& s : page.samples()) {
    if (s.code().find(kPoison) == std::string::npos) continue;
    ++bang;
    EXPECT_EQ(s.result().verdict(), "!");
    EXPECT_NE(s.result().detail().find("not simulated again"), std::string::npos)
        << s.result().detail();
  }
  EXPECT_EQ(bang, 1);
}

// A store on a small filesystem that fills up: the daemon refuses new work with 507 and a JSON
// error before the disk is full, keeps serving reads, pauses the runs it accepted, and finishes
// every one of them once the filesystem grows, by itself, without a restart.
TEST_F(DaemonTest, AFullDiskIsRefusedWithAnErrorAndAcceptedRunsFinishOnceSpaceReturns) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  const std::string small = dir_ + "/small";
  std::filesystem::create_directories(small);
  ASSERT_EQ(::mount("evald-test", small.c_str(), "tmpfs", 0, "size=24m"), 0) << strerror(errno);
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{small};
  ASSERT_TRUE(daemon_.Start(small + "/store", tokens_, "--min-free-mb 8 --jobs 2"));

  // Each run: the built-in samples with 100 KB of comment in every design.
  std::string jsonl;
  std::istringstream in(BuiltinSamples());
  std::string line;
  const std::string padding = "// " + std::string(100000, 'p') + "\\n";
  while (std::getline(in, line)) {
    size_t done = line.rfind("[DONE]");
    if (done == std::string::npos) continue;
    jsonl += line.substr(0, done) + padding + line.substr(done) + "\n";
  }
  std::vector<std::string> accepted;
  int refused_status = 0;
  std::string refused_body;
  for (int i = 0; i < 60 && refused_status == 0; ++i) {
    v1::CreateRunRequest req;
    req.mutable_spec()->set_dataset("builtin");
    req.set_samples_jsonl(jsonl);
    auto r = Post("/v1/runs", Json(req));
    if (r.status == 201) {
      accepted.push_back(Parse<v1::Run>(r.body).id());
    } else {
      refused_status = r.status;
      refused_body = r.body;
    }
  }
  ASSERT_EQ(refused_status, 507) << refused_body;
  auto error = Parse<v1::ErrorResponse>(refused_body);
  EXPECT_EQ(error.status(), 507);
  EXPECT_NE(error.error().find("free"), std::string::npos) << error.error();
  ASSERT_FALSE(accepted.empty());
  EXPECT_EQ(Get("/v1/runs").status, 200);  // reads go on
  EXPECT_EQ(Get("/healthz").status, 200);

  ASSERT_EQ(::mount(nullptr, small.c_str(), nullptr, MS_REMOUNT, "size=512m"), 0)
      << strerror(errno);
  for (const auto& id : accepted) {
    v1::Run run = WaitForRun(id, 600);
    EXPECT_EQ(run.state(), v1::SUCCEEDED) << id << ": " << run.state_reason();
    EXPECT_EQ(run.samples_done(), run.samples_total()) << id;
  }
  v1::CreateRunRequest again;
  again.mutable_spec()->set_dataset("builtin");
  again.set_samples_jsonl(BuiltinSamples());
  EXPECT_EQ(Post("/v1/runs", Json(again)).status, 201);
  daemon_.Stop(SIGTERM);
}

// The whole path from a REST submission: a checkpoint served by a second evald (the
// OpenAI-compatible endpoint over its decoding core) and the same GGUF file sampled by this
// daemon's own core; sampled, extracted, simulated, scored, stored, compared with their serving
// metrics side by side. stories260K writes stories, not Verilog: the pipeline is under test.
const std::string kStoriesModel = std::string(EVALD_SHARED_DIR) + "/models/stories260K-q8_0.gguf";
const char* kModelKeyEnv = "EVALD_TEST_MODEL_SERVER_KEY";

std::string SamplingRunBody(const std::string& checkpoint, const std::string& extra = "") {
  return R"({"spec":{"checkpoint_id":")" + checkpoint +
         R"(","dataset":"builtin","problems":["Bi01_and_gate","Bi02_mux2_byte"],"k":[1,2],)" +
         R"("sampling":{"n":3,"temperature":0.8,"top_p":0.95,"max_tokens":48,"seed":5)" + extra +
         R"(},"labels":{"suite":"e2e"}}})";
}

std::map<std::string, std::string> Completions(const v1::ListSamplesResponse& page) {
  std::map<std::string, std::string> out;
  for (const auto& s : page.samples())
    out[s.problem() + "/" + std::to_string(s.index())] = s.completion();
  return out;
}

TEST_F(DaemonTest, SamplesACheckpointServedByAnotherEvaldAndByItsOwnCore) {
  Daemon model_server;
  ASSERT_TRUE(model_server.Start(dir_ + "/model-store", tokens_,
                                 "--model " + kStoriesModel + " --model-name stories"));
  ::setenv(kModelKeyEnv, kRead, 1);  // the daemon inherits it; the key is any valid token there
  StartDaemon();
  auto ck_remote =
      Post("/v1/checkpoints", R"({"name":"stories-remote","endpoint":"http://127.0.0.1:)" +
                                  std::to_string(model_server.port()) +
                                  R"(","model":"stories","hardware":"cpu-evald","api_key_env":")" +
                                  kModelKeyEnv + R"("})");
  ASSERT_EQ(ck_remote.status, 201) << ck_remote.body;
  EXPECT_EQ(ck_remote.body.find(kRead), std::string::npos) << "the key itself is never stored";
  auto ck_core = Post("/v1/checkpoints", R"({"name":"stories-core","location":")" + kStoriesModel +
                                             R"(","hardware":"cpu-core"})");
  ASSERT_EQ(ck_core.status, 201) << ck_core.body;
  std::string remote_id = Parse<v1::Checkpoint>(ck_remote.body).id();
  std::string core_id = Parse<v1::Checkpoint>(ck_core.body).id();
  EXPECT_EQ(Parse<v1::Checkpoint>(ck_remote.body).format(), "remote");
  EXPECT_EQ(Parse<v1::Checkpoint>(ck_core.body).format(), "gguf");

  // Bad submissions are refused up front.
  EXPECT_EQ(Post("/v1/runs", SamplingRunBody(remote_id, R"(,"top_p":1.5)")).status, 400);
  EXPECT_EQ(Post("/v1/checkpoints", R"({"name":"x","location":"relative.gguf"})").status, 400);
  EXPECT_EQ(Post("/v1/checkpoints", R"({"name":"x","endpoint":"ftp://h","model":"m"})").status,
            400);

  auto a = Post("/v1/runs", SamplingRunBody(remote_id));
  ASSERT_EQ(a.status, 201) << a.body;
  auto b = Post("/v1/runs", SamplingRunBody(core_id));
  ASSERT_EQ(b.status, 201) << b.body;
  std::string run_a = Parse<v1::Run>(a.body).id(), run_b = Parse<v1::Run>(b.body).id();
  EXPECT_EQ(Parse<v1::Run>(a.body).spec().backend(), "remote");
  EXPECT_EQ(Parse<v1::Run>(b.body).spec().backend(), "core");
  EXPECT_EQ(Parse<v1::Run>(a.body).spec().hardware(), "cpu-evald");

  for (const auto& [id, backend] : {std::pair{run_a, "remote"}, std::pair{run_b, "core"}}) {
    v1::Run run = WaitForRun(id);
    ASSERT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
    EXPECT_EQ(run.samples_total(), 6);
    EXPECT_EQ(run.samples_generated(), 6);
    EXPECT_EQ(run.samples_done(), 6);
    EXPECT_EQ(run.summary().samples(), 6);
    const auto& m = run.serving();
    EXPECT_EQ(m.backend(), backend);
    EXPECT_EQ(m.completed_requests(), 2);  // one request of n=3 per problem
    EXPECT_EQ(m.failed_requests(), 0);
    EXPECT_GT(m.total_output_tokens(), 0);
    EXPECT_LE(m.total_output_tokens(), 6 * 48);
    EXPECT_GT(m.total_input_tokens(), 0);
    EXPECT_TRUE(m.usage_reported());
    EXPECT_GT(m.ttft().mean_ms(), 0);
    EXPECT_GE(m.e2e().p99_ms(), m.e2e().median_ms());
    EXPECT_GT(m.output_token_throughput(), 0);
    auto page = Parse<v1::ListSamplesResponse>(Get("/v1/runs/" + id + "/samples").body);
    ASSERT_EQ(page.samples_size(), 6);
    for (const auto& s : page.samples()) {
      EXPECT_TRUE(s.generated() && s.graded());
      EXPECT_FALSE(s.completion().empty());
      EXPECT_FALSE(s.result().verdict().empty());
      EXPECT_NE(s.result().verdict(), "!") << "no internal errors";
      EXPECT_TRUE(s.generation_error().empty());
    }
  }
  // Same file, same prompts, same seeds: the remote and the in-process core agree sample by
  // sample (sample i is drawn with seed + i on both sides).
  auto pa = Parse<v1::ListSamplesResponse>(Get("/v1/runs/" + run_a + "/samples").body);
  auto pb = Parse<v1::ListSamplesResponse>(Get("/v1/runs/" + run_b + "/samples").body);
  EXPECT_EQ(Completions(pa), Completions(pb));

  auto cmp = Get("/v1/compare?a=" + run_a + "&b=" + run_b);
  ASSERT_EQ(cmp.status, 200) << cmp.body;
  auto c = Parse<v1::Comparison>(cmp.body);
  EXPECT_EQ(c.a_serving().backend(), "remote");
  EXPECT_EQ(c.b_serving().backend(), "core");
  EXPECT_EQ(c.a_serving().hardware(), "cpu-evald");
  auto report = Parse<v1::EvalReport>(Get("/v1/runs/" + run_a + "/report").body);
  EXPECT_EQ(report.serving().completed_requests(), 2);

  // A second run of the same checkpoint and settings takes the stored generations.
  auto again = Post("/v1/runs", SamplingRunBody(remote_id));
  ASSERT_EQ(again.status, 201);
  v1::Run run_c = WaitForRun(Parse<v1::Run>(again.body).id());
  ASSERT_EQ(run_c.state(), v1::SUCCEEDED) << run_c.state_reason();
  EXPECT_EQ(run_c.serving().cached_samples(), 6);
  EXPECT_EQ(run_c.serving().completed_requests(), 0);
  auto metrics = Get("/metrics").body;
  EXPECT_NE(metrics.find("evald_generation_requests_total 4\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("evald_samples_generated_total 12\n"), std::string::npos);
  EXPECT_NE(metrics.find("evald_generation_cache_hits_total 6\n"), std::string::npos);
  model_server.Stop();
}

TEST_F(DaemonTest, AnEndpointThatIsDownFailsTheRunKeepsEverySampleAndResumes) {
  // A port with nobody behind it (yet).
  uint16_t port;
  {
    boost::asio::io_context ioc;
    boost::asio::ip::tcp::acceptor acc(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
    port = acc.local_endpoint().port();
  }
  ::setenv(kModelKeyEnv, kRead, 1);
  StartDaemon();
  auto ck = Post("/v1/checkpoints", R"({"name":"later","endpoint":"http://127.0.0.1:)" +
                                        std::to_string(port) + R"(","model":"stories",)" +
                                        R"("api_key_env":")" + kModelKeyEnv + R"("})");
  ASSERT_EQ(ck.status, 201) << ck.body;
  std::string ck_id = Parse<v1::Checkpoint>(ck.body).id();
  auto created = Post("/v1/runs", SamplingRunBody(ck_id, R"(,"max_attempts":2)"));
  ASSERT_EQ(created.status, 201) << created.body;
  std::string id = Parse<v1::Run>(created.body).id();
  v1::Run run = WaitForRun(id);
  ASSERT_EQ(run.state(), v1::FAILED);
  EXPECT_NE(run.state_reason().find("6 of 6 samples could not be generated"), std::string::npos)
      << run.state_reason();
  EXPECT_NE(run.state_reason().find("onnect"), std::string::npos) << run.state_reason();
  EXPECT_EQ(run.serving().failed_requests(), 2);
  auto page = Parse<v1::ListSamplesResponse>(Get("/v1/runs/" + id + "/samples").body);
  ASSERT_EQ(page.samples_size(), 6) << "no sample is lost";
  for (const auto& s : page.samples()) {
    EXPECT_FALSE(s.generated());
    EXPECT_FALSE(s.graded()) << "no verdict without a completion";
    EXPECT_NE(s.generation_error().find("attempt 2 of 2"), std::string::npos)
        << s.generation_error();
  }
  EXPECT_EQ(Post("/v1/runs/" + id + "/resume", "").status, 202);
  // The server now comes up on that port.
  Daemon model_server;
  ASSERT_TRUE(model_server.Start(dir_ + "/model-store", tokens_,
                                 "--model " + kStoriesModel + " --model-name stories",
                                 "127.0.0.1:" + std::to_string(port)));
  run = WaitForRun(id);
  if (run.state() == v1::FAILED) {  // resumed before the server was up: once more
    EXPECT_EQ(Post("/v1/runs/" + id + "/resume", "").status, 202);
    run = WaitForRun(id);
  }
  ASSERT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
  EXPECT_EQ(run.samples_generated(), 6);
  EXPECT_EQ(run.samples_done(), 6);
  EXPECT_EQ(Post("/v1/runs/" + id + "/resume", "").status, 400);
  page = Parse<v1::ListSamplesResponse>(Get("/v1/runs/" + id + "/samples").body);
  for (const auto& s : page.samples()) {
    EXPECT_TRUE(s.generated() && s.graded());
    EXPECT_TRUE(s.generation_error().empty());
  }
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
