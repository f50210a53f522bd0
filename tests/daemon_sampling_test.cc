// Runs that sample a checkpoint through the daemon: another evald's OpenAI-compatible endpoint,
// the daemon's own decoding core, and an endpoint that goes down.
#include <filesystem>
#include <map>
#include <tuple>
#include <vector>

#include "evald/proto/compare.pb.h"

#include "daemon_fixture.h"
#include "fake_server.h"

namespace evald {
namespace {

// The whole path from a REST submission: a checkpoint served by a second evald (the
// OpenAI-compatible endpoint over its decoding core) and the same GGUF file sampled by this
// daemon's own core; sampled, extracted, simulated, scored, stored, compared with their serving
// metrics side by side. stories260K writes stories, not Verilog: the pipeline is under test.
const std::string kStoriesModel = std::string(EVALD_SHARED_DIR) + "/models/stories260K-q8_0.gguf";
const char* kModelKeyEnv = "EVALD_TEST_MODEL_SERVER_KEY";
// The operator allows loopback endpoints, declares the model servers' key as a secret and
// allows the shared models directory.
const std::string kSamplingPolicy =
    std::string("--allow-endpoint 127.0.0.1/32 --secret model=env:") + kModelKeyEnv +
    " --model-root " + EVALD_SHARED_DIR + "/models";

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

// `evald serve --model FILE` alone: a temporary store (gone at exit), the file name as the
// model id, the OpenAI-compatible routes without a token, the REST API refusing every request.
TEST_F(DaemonTest, ServeModelAloneNeedsNoStoreOrTokens) {
  Daemon alone;
  const std::string log = dir_ + "/alone.log";
  ASSERT_TRUE(alone.Start("", "", "--model " + kStoriesModel, "127.0.0.1:0", log));
  const uint16_t port = alone.port();
  auto models = Http(port, "GET", "/v1/models", "");
  ASSERT_EQ(models.status, 200) << models.body;
  EXPECT_NE(models.body.find("\"id\":\"stories260K-q8_0\""), std::string::npos) << models.body;
  auto completion = Http(port, "POST", "/v1/completions", "",
                         R"({"model":"stories260K-q8_0","prompt":"Once","max_tokens":3})");
  EXPECT_EQ(completion.status, 200) << completion.body;
  EXPECT_EQ(Http(port, "GET", "/v1/runs", kRead).status, 401) << "no token is known";
  EXPECT_EQ(alone.Stop(SIGTERM), 0);
  auto text = ReadFileBounded(log);
  ASSERT_TRUE(text.ok());
  const size_t at = text->find("a temporary store in ");
  ASSERT_NE(at, std::string::npos) << *text;
  const std::string store = text->substr(at + 21, text->find(' ', at + 21) - at - 21);
  EXPECT_EQ(store.rfind("/tmp/evald-serve-", 0), 0u) << store;
  EXPECT_FALSE(std::filesystem::exists(store)) << "removed at exit: " << store;
  // Without --model, both flags are needed, and the message says so.
  auto refused = testing::RunShell(std::string(EVALD_BINARY) + " serve 2>&1");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("only serve --model FILE.gguf runs without them"),
            std::string::npos)
      << refused.output;
}

// One scenario, two daemons (longer than most functions on purpose: both runs are compared at
// the end, and splitting it would sample them twice).
TEST_F(DaemonTest, SamplesACheckpointServedByAnotherEvaldAndByItsOwnCore) {
  Daemon model_server;
  ASSERT_TRUE(model_server.Start(dir_ + "/model-store", tokens_,
                                 "--model " + kStoriesModel + " --model-name stories"));
  ::setenv(kModelKeyEnv, kRead, 1);  // the daemon inherits it; the key is any valid token there
  StartDaemon(kSamplingPolicy);
  auto ck_remote =
      Post("/v1/checkpoints",
           R"({"name":"stories-remote","endpoint":"http://127.0.0.1:)" +
               std::to_string(model_server.port()) +
               R"(","model":"stories","hardware":"cpu-evald","api_key_secret":"model"})");
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

// A chat checkpoint on the daemon's core: every stored sample carries the prompt the model read
// (the system and user turns rendered by the chat format), and so does one answered from the
// stored generations.
TEST_F(DaemonTest, ChatRunsOnTheCoreStoreTheRenderedPrompt) {
  StartDaemon(kSamplingPolicy);
  auto ck = Post("/v1/checkpoints", R"({"name":"stories-chat","location":")" + kStoriesModel +
                                        R"(","api":"chat","chat_format":"chatml"})");
  ASSERT_EQ(ck.status, 201) << ck.body;
  const std::string id = Parse<v1::Checkpoint>(ck.body).id();
  for (int round = 0; round < 2; ++round) {
    auto r = Post("/v1/runs", SamplingRunBody(id));
    ASSERT_EQ(r.status, 201) << r.body;
    const std::string run_id = Parse<v1::Run>(r.body).id();
    v1::Run run = WaitForRun(run_id);
    ASSERT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
    EXPECT_EQ(run.serving().prompt_format(), "chat: chatml (--chat-format)");
    EXPECT_EQ(run.serving().cached_samples(), round == 0 ? 0 : 6);
    auto page = Parse<v1::ListSamplesResponse>(Get("/v1/runs/" + run_id + "/samples").body);
    ASSERT_EQ(page.samples_size(), 6);
    for (const auto& s : page.samples()) {
      EXPECT_EQ(s.rendered_prompt().rfind("<|im_start|>system\n", 0), 0u) << s.rendered_prompt();
      EXPECT_NE(s.rendered_prompt().find("<|im_end|>\n<|im_start|>user\n"), std::string::npos);
      EXPECT_TRUE(s.rendered_prompt().ends_with("<|im_start|>assistant\n")) << s.rendered_prompt();
    }
  }
}

// A run of a Q4_0 file that asks for drift from the F32 file of the same checkpoint: once its
// samples are graded, the teacher-forced drift is kept with the run and its report, beside its
// pass@k, and the train-vs-serve page shows it (the base file's own run with none). Measured on
// the references it equals `evald drift` on the same files and problems, figure for figure. A
// base of another checkpoint fails the run with its samples graded and kept; requests naming no
// gguf base, or a run the core does not sample, are refused.
TEST_F(DaemonTest, RunsMeasureTheirDriftFromABaseCheckpoint) {
  StartDaemon(kSamplingPolicy);
  const std::string models = std::string(EVALD_SHARED_DIR) + "/models/";
  auto checkpoint = [&](const std::string& name, const std::string& file) {
    auto ck = Post("/v1/checkpoints", R"({"name":")" + name + R"(","location":")" + models + file +
                                          R"(","labels":{"model":"stories"}})");
    EXPECT_EQ(ck.status, 201) << ck.body;
    return Parse<v1::Checkpoint>(ck.body).id();
  };
  const std::string f32 = checkpoint("f32", "stories260K-f32.gguf");
  const std::string q4 = checkpoint("q4", "stories260K-q4_0.gguf");
  const std::string other = checkpoint("other", "llama-2-tiny-random.gguf");
  auto body = [&](const std::string& ck, const std::string& drift) {
    return R"({"spec":{"checkpoint_id":")" + ck +
           R"(","problems":["Bi01_and_gate","Bi02_mux2_byte"],"k":[1],)" +
           R"("sampling":{"n":2,"temperature":0.8,"max_tokens":24,"seed":3})" +
           (drift.empty() ? "" : R"(,"drift":)" + drift) + "}}";
  };
  auto created = [&](const std::string& request) {
    auto r = Post("/v1/runs", request);
    EXPECT_EQ(r.status, 201) << r.body;
    return Parse<v1::Run>(r.body).id();
  };
  const std::string on_samples = R"({"base_checkpoint_id":")" + f32 + R"("})";
  const std::string on_references =
      R"({"base_checkpoint_id":")" + f32 + R"(","completions":"references"})";

  v1::Run base_run = WaitForRun(created(body(f32, "")));
  ASSERT_EQ(base_run.state(), v1::SUCCEEDED) << base_run.state_reason();
  v1::Run run = WaitForRun(created(body(q4, on_samples)));
  ASSERT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
  ASSERT_EQ(run.drift().variants_size(), 1);
  const std::string f32_file = std::filesystem::canonical(models + "stories260K-f32.gguf");
  EXPECT_EQ(run.drift().base(), f32_file) << "the file as the policy resolved it";
  EXPECT_EQ(run.drift().completions(), "samples of run " + run.id());
  const auto& on_own = run.drift().variants(0);
  EXPECT_EQ(on_own.file(), std::filesystem::canonical(models + "stories260K-q4_0.gguf"));
  EXPECT_EQ(on_own.problems_size(), 2);
  EXPECT_GT(on_own.overall().tokens(), 0);
  EXPECT_GT(on_own.overall().mean_kl(), 0);
  auto report = Parse<v1::EvalReport>(Get("/v1/runs/" + run.id() + "/report").body);
  EXPECT_EQ(report.drift().variants(0).overall().mean_kl(), on_own.overall().mean_kl());
  EXPECT_EQ(report.summary().problems(), 2) << "pass@k beside it";

  // On the references: what `evald drift` measures on the same files and problems.
  v1::Run refs = WaitForRun(created(body(q4, on_references)));
  ASSERT_EQ(refs.state(), v1::SUCCEEDED) << refs.state_reason();
  EXPECT_EQ(refs.drift().completions(), "references");
  const std::string json = dir_ + "/drift.json";
  auto cli = testing::RunShell(
      std::string(EVALD_BINARY) + " drift --base " + models + "stories260K-f32.gguf --candidate " +
      models + "stories260K-q4_0.gguf --problems Bi01_and_gate Bi02_mux2_byte --json " + json +
      " 2>&1");
  ASSERT_EQ(cli.exit_code, 0) << cli.output;
  auto text = ReadFileBounded(json);
  ASSERT_TRUE(text.ok());
  v1::DriftReport expected;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*text, &expected).ok());
  ASSERT_EQ(expected.variants_size(), 1);
  const auto& want = expected.variants(0);
  const auto& got = refs.drift().variants(0);
  ASSERT_EQ(got.problems_size(), want.problems_size());
  for (int i = 0; i < want.problems_size(); ++i) {
    EXPECT_EQ(got.problems(i).problem(), want.problems(i).problem());
    EXPECT_EQ(got.problems(i).figures().tokens(), want.problems(i).figures().tokens());
    EXPECT_DOUBLE_EQ(got.problems(i).figures().mean_kl(), want.problems(i).figures().mean_kl());
  }
  EXPECT_DOUBLE_EQ(got.overall().mean_kl(), want.overall().mean_kl());
  EXPECT_NE(got.overall().mean_kl(), on_own.overall().mean_kl()) << "other completions";

  // The train-vs-serve page of the model's runs: each drift beside its pass@k.
  auto page =
      Get("/v1/reports/train-serve?label=model=stories&format=json&baseline=" + base_run.id());
  ASSERT_EQ(page.status, 200) << page.body;
  v1::TrainServeReport ts;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(page.body, &ts).ok()) << page.body;
  EXPECT_EQ(ts.drift_base(), f32_file);
  ASSERT_EQ(ts.variants_size(), 3);
  for (const auto& v : ts.variants()) {
    ASSERT_TRUE(v.has_drift()) << v.run();
    if (v.run() == base_run.id()) {
      EXPECT_EQ(v.drift().mean_kl(), 0);
    } else if (v.run() == run.id()) {
      EXPECT_EQ(v.drift().mean_kl(), on_own.overall().mean_kl());
    }
  }
  auto html = Get("/v1/reports/train-serve?label=model=stories&format=markdown");
  EXPECT_NE(html.body.find("## Drift from"), std::string::npos) << html.body;

  // Another checkpoint as the base: the run fails saying why; its samples stay graded.
  v1::Run wrong = WaitForRun(created(body(q4, R"({"base_checkpoint_id":")" + other + R"("})")));
  EXPECT_EQ(wrong.state(), v1::FAILED);
  EXPECT_NE(wrong.state_reason().find("its samples are graded"), std::string::npos)
      << wrong.state_reason();
  EXPECT_NE(wrong.state_reason().find("not the same checkpoint"), std::string::npos)
      << wrong.state_reason();
  EXPECT_EQ(wrong.samples_done(), 4);
  EXPECT_FALSE(wrong.has_drift());

  // Refused when created: no base, an unknown one, a base that is no gguf file, bad completions,
  // a run the core does not sample.
  auto samples_ck = Post("/v1/checkpoints", R"({"name":"uploads"})");
  ASSERT_EQ(samples_ck.status, 201) << samples_ck.body;
  const std::string uploads = Parse<v1::Checkpoint>(samples_ck.body).id();
  for (const auto& [ck, drift, want_text] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {q4, R"({})", "drift needs base_checkpoint_id"},
           {q4, R"({"base_checkpoint_id":"ck-none"})", "ck-none"},
           {q4, R"({"base_checkpoint_id":")" + uploads + R"("})", "must name a gguf checkpoint"},
           {q4, R"({"base_checkpoint_id":")" + f32 + R"(","completions":"x"})",
            "samples or references"},
           {uploads, on_samples, "backend core"}}) {
    auto r = Post("/v1/runs", body(ck, drift));
    EXPECT_GE(r.status, 400) << drift;
    EXPECT_LT(r.status, 500) << drift;
    EXPECT_NE(r.body.find(want_text), std::string::npos) << drift << ": " << r.body;
  }
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
  StartDaemon(kSamplingPolicy);
  auto ck = Post("/v1/checkpoints", R"({"name":"later","endpoint":"http://127.0.0.1:)" +
                                        std::to_string(port) + R"(","model":"stories",)" +
                                        R"("api_key_secret":"model"})");
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

// An RTLLM run sampled with the question-answer prompt style: the endpoint gets the description
// wrapped as verilog-eval wraps a spec, after its system message; the answer between [BEGIN] and
// [DONE] is what is graded; the report says which style the prompts had.
TEST_F(DaemonTest, AnRtllmRunSendsTheStyleOfPromptItAsksFor) {
  const std::string checkout = std::string(EVALD_SHARED_DIR) + "/rtllm2";
  if (!IsRegularFile(checkout + "/auto_run.py")) GTEST_SKIP() << "no ../shared/rtllm2";
  const std::string answer =
      "Here is the design.\n[BEGIN]\nmodule adder_8bit(input [7:0] a, input [7:0] b, input cin, "
      "output [7:0] sum, output cout);\n  assign {cout, sum} = a + b + cin;\nendmodule\n[DONE]\n";
  testing::FakeServer server([&](const HttpRequest& req, int) {
    return testing::Reply(req, boost::beast::http::status::ok,
                          R"({"choices":[{"index":0,"finish_reason":"stop","message":)"
                          R"({"role":"assistant","content":")" +
                              answer +
                              R"("}}],"usage":{"prompt_tokens":9,"completion_tokens":9}})");
  });
  StartDaemon("--allow-endpoint 127.0.0.1/32 --dataset rtllm=" + checkout);
  auto ck = Post("/v1/checkpoints",
                 R"({"name":"qa","endpoint":")" + server.url() + R"(","model":"m","api":"chat"})");
  ASSERT_EQ(ck.status, 201) << ck.body;
  const std::string ck_id = Parse<v1::Checkpoint>(ck.body).id();
  auto body = [&](const std::string& style) {
    return R"({"spec":{"checkpoint_id":")" + ck_id +
           R"(","dataset":"rtllm","task":"rtllm2","problems":["adder_8bit"],"k":[1],)" +
           R"("sampling":{"n":1,"no_stream":true},"prompt":{"style":")" + style + R"("}}})";
  };
  EXPECT_EQ(Post("/v1/runs", body("PROMPT_STYLE_WRAPPED")).status, 400);
  auto created = Post("/v1/runs", body("PROMPT_STYLE_QUESTION_ANSWER"));
  ASSERT_EQ(created.status, 201) << created.body;
  v1::Run run = WaitForRun(Parse<v1::Run>(created.body).id());
  ASSERT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
  EXPECT_NEAR(run.summary().pass_at().at("1"), 1.0, 1e-9);
  ASSERT_EQ(server.bodies().size(), 1u);
  const std::string sent = server.bodies()[0];
  EXPECT_NE(sent.find("Verilog RTL designer"), std::string::npos) << sent;
  EXPECT_NE(sent.find("Question:\\n"), std::string::npos) << sent;
  EXPECT_NE(sent.find("Enclose your code with [BEGIN] and [DONE]"), std::string::npos) << sent;
  auto report = Parse<v1::EvalReport>(Get("/v1/runs/" + run.id() + "/report").body);
  EXPECT_EQ(report.prompt().style(), v1::PROMPT_STYLE_QUESTION_ANSWER);
  ASSERT_EQ(report.samples_size(), 1);
  EXPECT_EQ(report.samples(0).verdict(), ".") << report.samples(0).detail();
  // verilog-eval's prompts take no other style: refused when the run is created.
  auto on_v2 =
      Post("/v1/runs", R"({"spec":{"checkpoint_id":")" + ck_id +
                           R"(","dataset":"builtin","prompt":{"style":"PROMPT_STYLE_SYSTEM"}}})");
  EXPECT_EQ(on_v2.status, 400) << on_v2.body;
  EXPECT_NE(on_v2.body.find("for RTLLM"), std::string::npos) << on_v2.body;
}

// A checkpoint served by two replicas, one of which dies: the run finishes on the other, and
// its serving metrics say per replica what each answered and how the dead one failed.
TEST_F(DaemonTest, ACheckpointWithTwoReplicasFinishesWhenOneDies) {
  Daemon alive, dying;
  ASSERT_TRUE(alive.Start(dir_ + "/replica-a", tokens_,
                          "--model " + kStoriesModel + " --model-name stories"));
  ASSERT_TRUE(dying.Start(dir_ + "/replica-b", tokens_,
                          "--model " + kStoriesModel + " --model-name stories"));
  ::setenv(kModelKeyEnv, kRead, 1);
  StartDaemon(kSamplingPolicy);
  const std::string a = "http://127.0.0.1:" + std::to_string(alive.port());
  const std::string b = "http://127.0.0.1:" + std::to_string(dying.port());
  auto ck = Post("/v1/checkpoints", R"({"name":"two","endpoint":")" + a + R"(","replicas":[")" + b +
                                        R"("],"model":"stories","max_concurrency":1,)" +
                                        R"("api_key_secret":"model"})");
  ASSERT_EQ(ck.status, 201) << ck.body;
  EXPECT_EQ(Post("/v1/checkpoints",
                 R"({"name":"x","endpoint":")" + a + R"(","replicas":["ftp://h"],"model":"m"})")
                .status,
            400);
  dying.Stop(SIGKILL);
  auto created = Post("/v1/runs", SamplingRunBody(Parse<v1::Checkpoint>(ck.body).id()));
  ASSERT_EQ(created.status, 201) << created.body;
  v1::Run run = WaitForRun(Parse<v1::Run>(created.body).id());
  ASSERT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
  EXPECT_EQ(run.samples_generated(), 6);
  const v1::ServingMetrics& m = run.serving();
  EXPECT_EQ(m.completed_requests(), 2);
  ASSERT_EQ(m.per_endpoint_size(), 2) << Json(m);
  for (const auto& e : m.per_endpoint()) {
    if (e.endpoint().find(b) == 0) {
      EXPECT_EQ(e.completed_requests(), 0);
      EXPECT_GE(e.failed_attempts(), 1);
      EXPECT_GE(e.times_taken_out(), 1);
    } else {
      EXPECT_EQ(e.endpoint().find(a), 0u) << e.endpoint();
      EXPECT_EQ(e.completed_requests(), 2);
      EXPECT_EQ(e.failed_attempts(), 0);
    }
  }
}

}  // namespace
}  // namespace evald
