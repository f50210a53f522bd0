// The daemon fetches, reads and sends only what its operator allowed (operator_policy.h):
// endpoints by the operator's list, never the daemon itself; a backend's error body never
// stored or shown; keys only by the name of a declared secret; recorded checkpoints only from
// uploads or an allowed directory, every refusal alike; per-token quotas answered with 429.
#include <sys/stat.h>

#include <atomic>
#include <set>
#include <thread>

#include "daemon_fixture.h"
#include "evald/server/run_requests.h"
#include "fake_server.h"

namespace evald {
namespace {

using testing::FakeServer;
using testing::Reply;
namespace http = boost::beast::http;

std::string RemoteCheckpoint(const std::string& endpoint, const std::string& extra = "") {
  return R"({"name":"m","endpoint":")" + endpoint + R"(","model":"m")" + extra + "}";
}

// An OpenAI-style completion stream.
std::string Stream(const std::string& text) {
  return "data: {\"choices\":[{\"index\":0,\"text\":\"" + text +
         "\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
}

std::string SamplingRun(const std::string& checkpoint_id) {
  return R"({"spec":{"checkpoint_id":")" + checkpoint_id +
         R"(","dataset":"builtin","problems":["Bi01_and_gate"],"sampling":{"n":1,)" +
         R"("max_attempts":1},"cross_checks":{"formal":false}}})";
}

TEST_F(DaemonTest, EndpointsOnlyWhereTheOperatorAllowsThem) {
  FakeServer server([](const HttpRequest& req, int) {
    return Reply(req, http::status::ok, Stream("x"), "text/event-stream");
  });
  StartDaemon();  // no --allow-endpoint: no endpoint at all
  for (const std::string& url :
       {server.url(), std::string("http://localhost:") + server.url().substr(17),
        std::string("http://169.254.169.254/latest/meta-data"), std::string("http://[::1]:80"),
        std::string("http://0.0.0.0:80"), std::string("http://10.1.2.3:8000"),
        std::string("http://user:pass@example.com"), std::string("file:///etc/passwd")}) {
    auto r = Post("/v1/checkpoints", RemoteCheckpoint(url));
    EXPECT_EQ(r.status, 400) << url << ": " << r.body;
  }
  daemon_.Stop(SIGTERM);
  // "public" still leaves out loopback, private and metadata addresses.
  StartDaemon("--allow-endpoint public");
  for (const std::string& url : {server.url(), std::string("http://169.254.169.254/"),
                                 std::string("http://[::ffff:127.0.0.1]:80")}) {
    auto r = Post("/v1/checkpoints", RemoteCheckpoint(url));
    EXPECT_EQ(r.status, 400) << url << ": " << r.body;
    EXPECT_NE(r.body.find("--allow-endpoint"), std::string::npos) << r.body;
  }
  daemon_.Stop(SIGTERM);
  // Named, loopback is allowed - but never the daemon's own port.
  StartDaemon("--allow-endpoint 127.0.0.0/8");
  EXPECT_EQ(Post("/v1/checkpoints", RemoteCheckpoint(server.url())).status, 201);
  const std::string self = "http://127.0.0.1:" + std::to_string(daemon_.port());
  auto r = Post("/v1/checkpoints", RemoteCheckpoint(self));
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("this daemon itself"), std::string::npos) << r.body;
  EXPECT_EQ(Post("/v1/checkpoints",
                 RemoteCheckpoint("http://127.9.9.9:" + std::to_string(daemon_.port())))
                .status,
            400);
}

TEST_F(DaemonTest, ABackendsErrorBodyIsNeverStoredOrShown) {
  const std::string secret_body = "BODY-FROM-THE-BACKEND-7f3a";
  FakeServer server([&](const HttpRequest& req, int) {
    return Reply(req, http::status::bad_request,
                 R"({"error":{"message":")" + secret_body + R"(","type":"x"}})");
  });
  StartDaemon("--allow-endpoint 127.0.0.1");
  auto ck = Post("/v1/checkpoints", RemoteCheckpoint(server.url()));
  ASSERT_EQ(ck.status, 201) << ck.body;
  auto created = Post("/v1/runs", SamplingRun(Parse<v1::Checkpoint>(ck.body).id()));
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string id = Parse<v1::Run>(created.body).id();
  v1::Run run = WaitForRun(id);
  EXPECT_EQ(run.state(), v1::FAILED);
  EXPECT_NE(run.state_reason().find("HTTP 400"), std::string::npos) << run.state_reason();
  for (const std::string& body :
       {Get("/v1/runs/" + id).body, Get("/v1/runs/" + id + "/samples").body,
        Get("/v1/runs/" + id + "/report").body})
    EXPECT_EQ(body.find(secret_body), std::string::npos) << body;
}

TEST_F(DaemonTest, KeysOnlyByTheNameOfASecretTheOperatorDeclared) {
  const std::string key_file = dir_ + "/key", key = "sk-operator-key-0123";
  ASSERT_TRUE(WriteFileAtomic(key_file, key + "\n").ok());
  FakeServer server([](const HttpRequest& req, int) {
    return Reply(req, http::status::ok, Stream("module TopModule(); endmodule"),
                 "text/event-stream");
  });
  ::setenv("EVALD_TEST_DAEMON_ENV_SECRET", "never-sent", 1);
  StartDaemon("--allow-endpoint 127.0.0.1 --secret vendor=file:" + key_file);
  // Variables and files a request names are not read.
  for (const std::string& extra : {std::string(R"(,"api_key_env":"EVALD_TEST_DAEMON_ENV_SECRET")"),
                                   std::string(R"(,"api_key_file":"/etc/passwd")"),
                                   std::string(R"(,"api_key_secret":"undeclared")")}) {
    auto r = Post("/v1/checkpoints", RemoteCheckpoint(server.url(), extra));
    EXPECT_EQ(r.status, 400) << extra << ": " << r.body;
  }
  auto ck =
      Post("/v1/checkpoints", RemoteCheckpoint(server.url(), R"(,"api_key_secret":"vendor")"));
  ASSERT_EQ(ck.status, 201) << ck.body;
  EXPECT_EQ(ck.body.find(key), std::string::npos);
  auto created = Post("/v1/runs", SamplingRun(Parse<v1::Checkpoint>(ck.body).id()));
  ASSERT_EQ(created.status, 201) << created.body;
  v1::Run run = WaitForRun(Parse<v1::Run>(created.body).id());
  EXPECT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
  ASSERT_FALSE(server.auth().empty());
  EXPECT_EQ(server.auth().front(), "Bearer " + key);
}

TEST_F(DaemonTest, RecordedCheckpointsOnlyFromUploadsOrAllowedDirectories) {
  const std::string root = dir_ + "/recorded", outside = dir_ + "/outside.jsonl";
  std::filesystem::create_directories(root + "/sub");
  const std::string line = R"({"problem":"Bi01_and_gate","completion":"x"})";
  ASSERT_TRUE(WriteFileAtomic(root + "/ok.jsonl", line + "\n").ok());
  ASSERT_TRUE(WriteFileAtomic(outside, line + "\n").ok());
  ASSERT_EQ(::symlink(outside.c_str(), (root + "/link.jsonl").c_str()), 0);
  StartDaemon("--recorded-root " + root);
  auto body = [](const std::string& location) {
    return R"({"name":"r","format":"recorded","location":")" + location + R"("})";
  };
  EXPECT_EQ(Post("/v1/checkpoints", body(root + "/ok.jsonl")).status, 201);
  // Outside, missing, a directory, a link out, a relative path: one and the same answer.
  std::set<std::string> answers;
  for (const std::string& location :
       {outside, std::string("/etc/passwd"), root + "/missing.jsonl", root + "/sub",
        root + "/link.jsonl", root + "/../outside.jsonl", std::string("ok.jsonl")}) {
    auto r = Post("/v1/checkpoints", body(location));
    EXPECT_EQ(r.status, 400) << location;
    answers.insert(r.body);
  }
  EXPECT_EQ(answers.size(), 1u) << *answers.begin();
  // Uploaded with the checkpoint: kept by the daemon and sampled from.
  v1::Checkpoint upload;
  upload.set_name("uploaded");
  upload.set_recorded_completions(
      R"({"problem":"Bi01_and_gate","completion":"module TopModule(input a, input b, output out); assign out = a & b; endmodule"})"
      "\n");
  auto up = Post("/v1/checkpoints", Json(upload));
  ASSERT_EQ(up.status, 201) << up.body;
  const v1::Checkpoint kept = Parse<v1::Checkpoint>(up.body);
  EXPECT_EQ(kept.format(), "recorded");
  EXPECT_TRUE(kept.recorded_completions().empty());
  auto created = Post("/v1/runs", SamplingRun(kept.id()));
  ASSERT_EQ(created.status, 201) << created.body;
  v1::Run run = WaitForRun(Parse<v1::Run>(created.body).id());
  EXPECT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
  EXPECT_EQ(run.summary().pass_at().at("1"), 1.0);
}

TEST_F(DaemonTest, QuotasPerTokenAreAnsweredWith429) {
  const char* kSmall = "small-token-0123456789abcdef";
  const char* kTiny = "tiny-token-0123456789abcdef";
  ASSERT_TRUE(WriteFileAtomic(tokens_, std::string(kRead) + " read\n" + kSubmit + " submit\n" +
                                           kSmall + " submit samples=3\n" + kTiny +
                                           " submit bytes=100\n")
                  .ok());
  // A model server that holds its answers until released: a run stays in flight meanwhile.
  std::atomic<bool> release{false};
  FakeServer server([&](const HttpRequest& req, int) {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return Reply(req, http::status::ok, Stream("x"), "text/event-stream");
  });
  StartDaemon("--quota-runs 1 --allow-endpoint 127.0.0.1");
  v1::CreateRunRequest upload;
  upload.mutable_spec()->set_dataset("builtin");
  upload.set_samples_jsonl(BuiltinSamples());  // more than 3 samples, more than 100 bytes
  auto r = Post("/v1/runs", Json(upload), kSmall);
  EXPECT_EQ(r.status, 429) << r.body;
  EXPECT_NE(r.body.find("samples to grade"), std::string::npos) << r.body;
  r = Post("/v1/runs", Json(upload), kTiny);
  EXPECT_EQ(r.status, 429) << r.body;
  EXPECT_NE(r.body.find("bytes"), std::string::npos) << r.body;

  auto ck = Post("/v1/checkpoints", RemoteCheckpoint(server.url()));
  ASSERT_EQ(ck.status, 201) << ck.body;
  auto first = Post("/v1/runs", SamplingRun(Parse<v1::Checkpoint>(ck.body).id()));
  ASSERT_EQ(first.status, 201) << first.body;
  const v1::Run created = Parse<v1::Run>(first.body);
  EXPECT_EQ(created.submitter(), SubmitterId(kSubmit));
  EXPECT_EQ(first.body.find(kSubmit), std::string::npos);  // the token itself is never stored
  auto second = Post("/v1/runs", Json(upload));
  EXPECT_EQ(second.status, 429) << second.body;
  EXPECT_NE(second.body.find("runs queued or running"), std::string::npos) << second.body;
  EXPECT_EQ(Post("/v1/runs", Json(upload), kSmall).status, 429);  // other tokens: their own
  release = true;
  EXPECT_EQ(WaitForRun(created.id()).state(), v1::SUCCEEDED);
  EXPECT_EQ(Post("/v1/runs", Json(upload)).status, 201);  // finished runs do not count
}

}  // namespace
}  // namespace evald
