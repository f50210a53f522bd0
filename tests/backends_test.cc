// The sampling backends: the OpenAI wire format, SSE parsing, the HTTP server's stop, serving
// metrics, the remote client against a fault-injecting server (429, 5xx, 400, malformed JSON,
// truncated streams, slow and absent servers, wrong choice counts, the concurrency cap, the API
// key), evald's own OpenAI-compatible endpoints over the decoding core, and recorded completions.
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include <google/protobuf/util/json_util.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "base/file_io.h"
#include "base/hash.h"
#include "base/utf8.h"
#include "daemon_client.h"
#include "evald/backends/core_backend.h"
#include "evald/backends/openai_wire.h"
#include "evald/backends/recorded_backend.h"
#include "evald/backends/remote_backend.h"
#include "evald/backends/sse_parser.h"
#include "evald/metrics/serving_metrics.h"
#include "evald/server/http_server.h"
#include "evald/server/openai_routes.h"
#include "fake_server.h"
#include "kernels/gguf/random_model.h"
#include "test_support.h"

namespace evald {
namespace {

using testing::FakeServer;
using testing::Reply;

const std::string kStories = std::string(EVALD_SHARED_DIR) + "/models/stories260K-q8_0.gguf";

TEST(SseParser, EventsSurviveAnySplit) {
  const std::string body =
      ": keep-alive\r\ndata: {\"a\":1}\r\n\r\ndata: line1\ndata: line2\n\nevent: "
      "x\ndata:[DONE]\n\n";
  for (size_t cut = 0; cut <= body.size(); ++cut) {
    SseParser p;
    std::vector<std::string> events;
    auto on = [&](std::string_view d) { events.emplace_back(d); };
    ASSERT_TRUE(p.Feed(body.substr(0, cut), on));
    ASSERT_TRUE(p.Feed(body.substr(cut), on));
    p.Finish(on);
    ASSERT_EQ(events.size(), 3u) << cut;
    EXPECT_EQ(events[0], "{\"a\":1}");
    EXPECT_EQ(events[1], "line1\nline2");
    EXPECT_EQ(events[2], "[DONE]");
  }
}

TEST(SseParser, UnterminatedLastEventAndOverflow) {
  SseParser p;
  std::vector<std::string> events;
  auto on = [&](std::string_view d) { events.emplace_back(d); };
  p.Feed("data: a\n\ndata: b\n", on);
  EXPECT_EQ(events.size(), 1u);
  p.Finish(on);
  EXPECT_EQ(events.size(), 2u);
  SseParser small(16);
  EXPECT_FALSE(small.Feed("data: " + std::string(100, 'x'), on));
  EXPECT_TRUE(small.overflowed());
}

TEST(Utf8, SanitizeAndSafeCut) {
  EXPECT_EQ(SanitizeUtf8("ok \xC3\xA9"), "ok \xC3\xA9");
  EXPECT_EQ(SanitizeUtf8("a\xFF"
                         "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(SanitizeUtf8("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(SanitizeUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  const std::string euro = "x\xE2\x82\xAC";
  EXPECT_EQ(Utf8SafeCut(euro, 4), 4u);
  EXPECT_EQ(Utf8SafeCut(euro, 3), 1u);
  EXPECT_EQ(Utf8SafeCut(euro, 2), 1u);
  EXPECT_EQ(Utf8SafeCut(euro, 1), 1u);
  EXPECT_EQ(Utf8SafeCut("ab", 10), 2u);
}

TEST(OpenAiWire, EverySamplingParameterIsExplicit) {
  SampleRequest r;
  r.system = "sys";
  r.user = "Write a module.";
  r.n = 5;
  r.seed = 42;
  r.sampling.temperature = 0;
  r.sampling.top_p = 0.95;
  r.sampling.max_tokens = 300;
  r.sampling.stop = {"endmodule"};
  std::string json = BuildCompletionRequestJson(r, "m", OpenAiApi::kCompletions, true);
  for (const char* field :
       {"\"temperature\":0", "\"top_p\":0.95", "\"top_k\":-1", "\"min_p\":0", "\"max_tokens\":300",
        "\"n\":5", "\"seed\":42", "\"stream\":true", "\"include_usage\":true",
        "\"stop\":[\"endmodule\"]", "\"prompt\":\"sys\\n\\nWrite a module.\"",
        "\"presence_penalty\":0", "\"frequency_penalty\":0"})
    EXPECT_NE(json.find(field), std::string::npos) << field << " in " << json;
  EXPECT_EQ(json.find("maxTokens"), std::string::npos);
  std::string chat = BuildCompletionRequestJson(r, "m", OpenAiApi::kChat, false);
  EXPECT_NE(chat.find("{\"role\":\"system\",\"content\":\"sys\"}"), std::string::npos) << chat;
  EXPECT_NE(chat.find("\"stream\":false"), std::string::npos);
  EXPECT_EQ(chat.find("\"prompt\""), std::string::npos);
}

TEST(OpenAiWire, ParsesServerChunksWithNullsAndExtensions) {
  auto c = ParseCompletionResponse(
      R"({"id":"x","object":"text_completion","created":1700000000,"model":"m","choices":[{"index":1,"text":"ab","logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null,"timings":{"a":[1,2]}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->choices(0).index(), 1);
  EXPECT_EQ(c->choices(0).text(), "ab");
  EXPECT_FALSE(c->has_usage());
  EXPECT_FALSE(ParseCompletionResponse("{\"choices\": 5}").ok());
  EXPECT_FALSE(ParseCompletionResponse("{not json").ok());
}

TEST(OpenAiWire, EndpointUrlsAndRedaction) {
  EXPECT_EQ(OpenAiEndpointUrl("http://h:8000", OpenAiApi::kCompletions),
            "http://h:8000/v1/completions");
  EXPECT_EQ(OpenAiEndpointUrl("http://h:8000/v1/", OpenAiApi::kChat),
            "http://h:8000/v1/chat/completions");
  EXPECT_EQ(RedactUrl("https://user:secret@h/v1"), "https://h/v1");
  EXPECT_EQ(RedactUrl("http://h/v1?x=a@b"), "http://h/v1?x=a@b");
}

TEST(ServingMetrics, DefinitionsOfVllmServingBenchmark) {
  std::vector<v1::RequestTiming> reqs(2);
  reqs[0].set_ttft_ms(100);
  reqs[0].set_e2e_ms(1100);
  reqs[0].set_completion_tokens(11);
  reqs[0].set_prompt_tokens(50);
  reqs[0].set_samples(1);
  reqs[0].set_streamed(true);
  reqs[0].set_usage_reported(true);
  reqs[0].set_attempts(1);
  reqs[0].add_itl_ms(10);
  reqs[0].add_itl_ms(30);
  reqs[1] = reqs[0];
  reqs[1].set_ttft_ms(300);
  reqs[1].set_e2e_ms(2300);
  reqs[1].set_attempts(3);
  reqs[1].clear_itl_ms();
  reqs[1].add_itl_ms(20);
  auto m = AggregateServing(reqs, 1, 4.0);
  EXPECT_EQ(m.completed_requests(), 2);
  EXPECT_EQ(m.failed_requests(), 1);
  EXPECT_EQ(m.retries(), 2);
  EXPECT_EQ(m.total_output_tokens(), 22);
  EXPECT_DOUBLE_EQ(m.request_throughput(), 0.5);
  EXPECT_DOUBLE_EQ(m.output_token_throughput(), 5.5);
  EXPECT_DOUBLE_EQ(m.ttft().mean_ms(), 200);
  EXPECT_DOUBLE_EQ(m.ttft().median_ms(), 200);
  EXPECT_DOUBLE_EQ(m.ttft().p99_ms(), 100 + 200 * 0.99);
  EXPECT_DOUBLE_EQ(m.tpot().mean_ms(), (100.0 + 200.0) / 2);  // 1000/10 and 2000/10
  EXPECT_DOUBLE_EQ(m.itl().median_ms(), 20);
  EXPECT_DOUBLE_EQ(m.e2e().mean_ms(), 1700);
  EXPECT_TRUE(m.streamed());
}

// An OpenAI-compatible server whose every answer the test decides.
// One request on a kept-alive connection, synchronously (Beast's own client).
HttpResponse Exchange(boost::asio::ip::tcp::socket& socket, const std::string& target) {
  HttpRequest req{http::verb::get, target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.keep_alive(true);
  http::write(socket, req);
  boost::beast::flat_buffer buffer;
  HttpResponse res;
  http::read(socket, buffer, res);
  return res;
}

// A stopping server answers the request it is serving (telling the client not to reuse the
// connection) and refuses a new one on a kept-alive connection, so a client that keeps sending
// can neither hold off the stop nor keep being served by a server that is going away.
TEST(HttpServer, StoppingAnswersWhatItServesAndRefusesWhatComesAfter) {
  namespace net = boost::asio;
  std::atomic<bool> holding{false}, release{false};
  HttpServerOptions o;
  o.port = 0;
  o.threads = 2;
  HttpServer server(o, [&](const HttpRequest& req) {
    if (req.target() == "/hold") {
      holding = true;
      for (int i = 0; !release && i < 10000; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return JsonResponse(req, http::status::ok, "{}");
  });
  ASSERT_TRUE(server.Start().ok());
  net::io_context ioc;
  const net::ip::tcp::endpoint at(net::ip::make_address("127.0.0.1"), server.port());
  net::ip::tcp::socket idle(ioc), held(ioc);
  idle.connect(at);
  held.connect(at);
  HttpResponse before = Exchange(idle, "/quick");
  EXPECT_EQ(before.result(), http::status::ok);
  EXPECT_TRUE(before.keep_alive());
  HttpResponse held_answer;
  std::thread holder([&] { held_answer = Exchange(held, "/hold"); });
  while (!holding) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::thread stopper([&] { server.Stop(); });
  // Stop sets `stopping` before it waits; give it a moment to get there.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  HttpResponse after = Exchange(idle, "/quick");
  EXPECT_EQ(after.result(), http::status::service_unavailable);
  EXPECT_FALSE(after.keep_alive());
  EXPECT_NE(after.body().find("shutting down"), std::string::npos) << after.body();
  release = true;
  holder.join();
  stopper.join();
  EXPECT_EQ(held_answer.result(), http::status::ok);
  EXPECT_FALSE(held_answer.keep_alive()) << "a stopping server's answers close the connection";
  net::ip::tcp::socket late(ioc);
  boost::system::error_code ec;
  late.connect(at, ec);
  EXPECT_TRUE(ec) << "a stopped server refuses connections";
}

// A complete SSE stream with n choices, each saying "choice<i>" in two chunks.
std::string GoodStream(int n, bool done = true, bool finish = true) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += "data: {\"choices\":[{\"index\":" + std::to_string(i) + ",\"text\":\"cho\"}]}\n\n";
  for (int i = 0; i < n; ++i)
    s += "data: {\"choices\":[{\"index\":" + std::to_string(i) + ",\"text\":\"ice" +
         std::to_string(i) + "\"" + (finish ? ",\"finish_reason\":\"stop\"" : "") + "}]}\n\n";
  s += "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":" +
       std::to_string(2 * n) + "}}\n\n";
  if (done) s += "data: [DONE]\n\n";
  return s;
}

struct Outcome {
  std::vector<SampleResponse> responses;
};

Outcome RunRemote(RemoteBackendOptions o, int requests = 1, int n = 2) {
  o.model = "m";
  o.backoff_initial_s = 0.01;
  o.backoff_max_s = 0.05;
  RemoteBackend backend(o);
  std::vector<SampleRequest> reqs(static_cast<size_t>(requests));
  for (int i = 0; i < requests; ++i) {
    reqs[i].problem = "P" + std::to_string(i);
    reqs[i].n = n;
    reqs[i].user = "prompt";
  }
  Outcome out;
  out.responses.resize(reqs.size());
  std::vector<int> answered(reqs.size(), 0);
  CancelToken cancel;
  backend.Run(
      reqs,
      [&](size_t i, SampleResponse r) {
        ++answered[i];
        out.responses[i] = std::move(r);
      },
      cancel);
  for (int a : answered) EXPECT_EQ(a, 1) << "every request is answered exactly once";
  return out;
}

TEST(RemoteBackend, StreamsChoicesUsageAndTiming) {
  FakeServer server([](const HttpRequest& req, int) {
    return Reply(req, http::status::ok, GoodStream(2), "text/event-stream");
  });
  RemoteBackendOptions o;
  o.endpoint = server.url();
  o.api_key = "sk-secret-key-123";
  auto out = RunRemote(o);
  const auto& r = out.responses[0];
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_EQ(r.samples[0].text, "choice0");
  EXPECT_EQ(r.samples[1].text, "choice1");
  EXPECT_EQ(r.samples[1].finish_reason, "stop");
  EXPECT_EQ(r.timing.completion_tokens(), 4);
  EXPECT_EQ(r.timing.prompt_tokens(), 7);
  EXPECT_TRUE(r.timing.usage_reported());
  EXPECT_GE(r.timing.ttft_ms(), 0);
  EXPECT_GE(r.timing.e2e_ms(), r.timing.ttft_ms());
  EXPECT_EQ(r.timing.itl_ms_size(), 2);  // one gap per choice
  EXPECT_EQ(server.auth()[0], "Bearer sk-secret-key-123");
}

// Two replicas of one model: requests are spread over both, each under its own cap; when one
// dies mid-run its requests (those cut off and those still to come) go to the other, every
// request is answered, and each replica's share and failures are kept apart.
TEST(RemoteBackend, ReplicasShareTheRequestsAndOneDyingLosesNothing) {
  // Until b is dead, a holds its requests: the first requests go to b, and when it dies most
  // are still unanswered, so some are sent to it after its death whatever the machine's load.
  std::atomic<bool> b_dead{false};
  auto slow_good = [](const HttpRequest& req, int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return Reply(req, http::status::ok, GoodStream(2), "text/event-stream");
  };
  FakeServer a([&](const HttpRequest& req, int call) {
    for (int waited = 0; !b_dead && waited < 10000; ++waited)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return slow_good(req, call);
  });
  FakeServer b(slow_good);
  RemoteBackendOptions o;
  o.endpoint = a.url();
  o.replicas = {b.url()};
  o.max_concurrency = 2;
  o.model = "m";
  o.backoff_initial_s = 0.01;
  RemoteBackend backend(o);
  std::vector<SampleRequest> reqs(40);
  for (size_t i = 0; i < reqs.size(); ++i) {
    reqs[i].problem = "P" + std::to_string(i);
    reqs[i].n = 2;
  }
  std::thread killer([&] {
    while (b.calls() < 4) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    b.Kill();
    b_dead = true;
  });
  std::vector<v1::RequestTiming> timings;
  int ok = 0;
  CancelToken cancel;
  backend.Run(
      reqs,
      [&](size_t, SampleResponse r) {
        if (!r.status.ok()) return;
        ++ok;
        timings.push_back(r.timing);
      },
      cancel);
  killer.join();
  EXPECT_EQ(ok, 40) << "the surviving replica answers everything";
  EXPECT_LE(a.max_concurrent(), 2);
  const std::vector<EndpointHealth> health = backend.Health();
  ASSERT_EQ(health.size(), 2u);
  EXPECT_EQ(health[0].failed_attempts, 0);
  EXPECT_GE(health[1].completed_requests, 1) << "b served some before it died";
  EXPECT_GE(health[1].times_taken_out, 1);
  EXPECT_EQ(health[0].completed_requests + health[1].completed_requests, 40);
  v1::ServingMetrics m = AggregateServing(timings, 0, 1.0);
  AddPerEndpointServing(timings, &m);
  ASSERT_EQ(m.per_endpoint_size(), 2);
  EXPECT_EQ(m.per_endpoint(0).completed_requests() + m.per_endpoint(1).completed_requests(), 40);
  EXPECT_NE(backend.Describe().find(b.url()), std::string::npos);
}

TEST(RemoteBackend, RetriesRateLimitsAndServerErrorsThenSucceeds) {
  FakeServer server([](const HttpRequest& req, int call) {
    if (call == 1) {
      auto res = Reply(req, http::status::too_many_requests,
                       R"({"error":{"message":"slow down","type":"rate_limit"}})");
      res.set(http::field::retry_after, "0");
      return res;
    }
    if (call == 2)
      return Reply(req, http::status::bad_gateway, "<html>bad gateway</html>", "text/html");
    return Reply(req, http::status::ok, GoodStream(2), "text/event-stream");
  });
  RemoteBackendOptions o;
  o.endpoint = server.url();
  auto out = RunRemote(o);
  ASSERT_TRUE(out.responses[0].status.ok()) << out.responses[0].status.ToString();
  EXPECT_EQ(out.responses[0].timing.attempts(), 3);
  EXPECT_EQ(server.calls(), 3);
}

TEST(RemoteBackend, GivesUpAfterMaxAttemptsInEvaldsOwnWords) {
  FakeServer server([](const HttpRequest& req, int) {
    return Reply(req, http::status::service_unavailable,
                 R"({"error":{"message":"engine overloaded","type":"server_error"}})");
  });
  RemoteBackendOptions o;
  o.endpoint = server.url();
  o.max_attempts = 3;
  o.api_key = "sk-never-shown";
  auto out = RunRemote(o);
  const Status& st = out.responses[0].status;
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("HTTP 503 (server error)"), std::string::npos) << st.message();
  // The server's own words are never passed on (a run's record is readable with a read token).
  EXPECT_EQ(st.message().find("engine overloaded"), std::string::npos);
  EXPECT_NE(st.message().find("attempt 3 of 3"), std::string::npos);
  EXPECT_EQ(st.message().find("sk-never-shown"), std::string::npos);
  EXPECT_TRUE(out.responses[0].samples.empty());
  EXPECT_EQ(server.calls(), 3);
}

TEST(RemoteBackend, ClientErrorsAreNotRetried) {
  FakeServer server([](const HttpRequest& req, int) {
    return Reply(
        req, http::status::bad_request,
        R"({"error":{"message":"top_k is not supported","type":"invalid_request_error"}})");
  });
  RemoteBackendOptions o;
  o.endpoint = server.url();
  auto out = RunRemote(o);
  ASSERT_FALSE(out.responses[0].status.ok());
  EXPECT_NE(out.responses[0].status.message().find("HTTP 400 (the server refused the request)"),
            std::string::npos)
      << out.responses[0].status.message();
  EXPECT_EQ(out.responses[0].status.message().find("top_k"), std::string::npos);
  EXPECT_EQ(server.calls(), 1);
}

TEST(RemoteBackend, MalformedJsonTruncatedStreamsAndMissingChoicesAreRetried) {
  for (int fault = 0; fault < 4; ++fault) {
    FakeServer server([fault](const HttpRequest& req, int call) {
      if (call == 1) {
        switch (fault) {
          case 0:
            return Reply(req, http::status::ok, "data: {\"choices\": [{\"index\": 0, \"te\n\n",
                         "text/event-stream");
          case 1:
            return Reply(req, http::status::ok, GoodStream(2, /*done=*/false, /*finish=*/false),
                         "text/event-stream");
          case 2:
            return Reply(req, http::status::ok, GoodStream(1), "text/event-stream");
          default:
            return Reply(req, http::status::ok, "{\"choices\": not json");
        }
      }
      return Reply(req, http::status::ok, GoodStream(2), "text/event-stream");
    });
    RemoteBackendOptions o;
    o.endpoint = server.url();
    auto out = RunRemote(o);
    ASSERT_TRUE(out.responses[0].status.ok())
        << fault << ": " << out.responses[0].status.ToString();
    EXPECT_EQ(out.responses[0].samples[1].text, "choice1");
    EXPECT_EQ(out.responses[0].timing.attempts(), 2) << fault;
  }
  // Always truncated: a clear error, no samples.
  FakeServer truncating([](const HttpRequest& req, int) {
    return Reply(req, http::status::ok, GoodStream(2, false, false), "text/event-stream");
  });
  RemoteBackendOptions o;
  o.endpoint = truncating.url();
  o.max_attempts = 2;
  auto out = RunRemote(o);
  ASSERT_FALSE(out.responses[0].status.ok());
  EXPECT_NE(out.responses[0].status.message().find("truncated"), std::string::npos)
      << out.responses[0].status.message();
}

TEST(RemoteBackend, SlowAndAbsentServersTimeOutAndFailClearly) {
  FakeServer slow([](const HttpRequest& req, int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    return Reply(req, http::status::ok, GoodStream(2), "text/event-stream");
  });
  RemoteBackendOptions o;
  o.endpoint = slow.url();
  o.request_timeout_s = 0.3;
  o.max_attempts = 2;
  auto out = RunRemote(o);
  ASSERT_FALSE(out.responses[0].status.ok());
  EXPECT_NE(out.responses[0].status.message().find("timed out"), std::string::npos)
      << out.responses[0].status.message();

  // A port nobody listens on.
  uint16_t port;
  {
    HttpServerOptions so;
    so.port = 0;
    HttpServer probe(so, [](const HttpRequest& r) { return Reply(r, http::status::ok, ""); });
    ASSERT_TRUE(probe.Start().ok());
    port = probe.port();
  }
  o.endpoint = "http://127.0.0.1:" + std::to_string(port);
  o.request_timeout_s = 5;
  auto down = RunRemote(o, 3);
  for (const auto& r : down.responses) {
    ASSERT_FALSE(r.status.ok());
    EXPECT_NE(r.status.message().find("attempt 2 of 2"), std::string::npos) << r.status.message();
  }
}

TEST(RemoteBackend, ConcurrencyCapAndRequestBodies) {
  FakeServer server(
      [](const HttpRequest& req, int) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return Reply(req, http::status::ok, GoodStream(1), "text/event-stream");
      },
      8);
  RemoteBackendOptions o;
  o.endpoint = server.url();
  o.max_concurrency = 3;
  auto out = RunRemote(o, 12, 1);
  for (const auto& r : out.responses) EXPECT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_LE(server.max_concurrent(), 3);
  EXPECT_GE(server.max_concurrent(), 2);
  for (const auto& body : server.bodies()) {
    auto req = ParseCompletionRequest(body);
    ASSERT_TRUE(req.ok());
    EXPECT_TRUE(req->has_temperature() && req->has_top_p() && req->has_max_tokens() &&
                req->has_seed() && req->has_n());
  }
}

TEST(RemoteBackend, CancelAnswersEveryRequest) {
  FakeServer server([](const HttpRequest& req, int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return Reply(req, http::status::ok, GoodStream(1), "text/event-stream");
  });
  RemoteBackendOptions o;
  o.endpoint = server.url();
  o.model = "m";
  o.max_concurrency = 1;
  RemoteBackend backend(o);
  std::vector<SampleRequest> reqs(5);
  CancelToken cancel;
  int answered = 0, cancelled = 0;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancel.Stop();
  });
  backend.Run(
      reqs,
      [&](size_t, SampleResponse r) {
        ++answered;
        if (r.status.code() == Status::Code::kCancelled) ++cancelled;
      },
      cancel);
  canceller.join();
  EXPECT_EQ(answered, 5);
  EXPECT_GE(cancelled, 4);
}

// evald's own endpoints over the decoding core, read back through the remote backend.
class CoreEndpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    CoreEngine::Options options;
    options.chat_format = "chatml";  // stories260K has no chat template
    auto engine = CoreEngine::Load(kStories, options);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::shared_ptr<CoreEngine>(std::move(*engine));
    routes_ = std::make_unique<OpenAiRoutes>(engine_, "stories", TokenScopes{});
    HttpServerOptions o;
    o.port = 0;
    server_ = std::make_unique<HttpServer>(
        o, [](const HttpRequest& r) { return Reply(r, http::status::not_found, "{}"); });
    server_->SetLongHandler(
        &OpenAiRoutes::Matches,
        [this](const HttpRequest& r, HttpResponder& out) { routes_->Handle(r, out); });
    ASSERT_TRUE(server_->Start().ok());
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }

  std::vector<std::string> Direct(const SampleRequest& r, bool chat = false) {
    CoreRequest cr = CoreRequestFor(r, chat);
    auto out = engine_->Generate(cr);
    EXPECT_TRUE(out.ok());
    std::vector<std::string> texts;
    for (const auto& c : out->completions) texts.push_back(c.text);
    return texts;
  }

  std::shared_ptr<CoreEngine> engine_;
  std::unique_ptr<OpenAiRoutes> routes_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(CoreEndpoint, StreamedWholeAndChatAnswersEqualTheCore) {
  SampleRequest r;
  r.problem = "P";
  r.user = "Once upon a time";
  r.n = 3;
  r.seed = 11;
  r.sampling.temperature = 0.9;
  r.sampling.top_p = 0.95;
  r.sampling.max_tokens = 40;
  for (OpenAiApi api : {OpenAiApi::kCompletions, OpenAiApi::kChat}) {
    // Chat: the messages rendered in the engine's chat format, as a chat run on the core does.
    const auto expected = Direct(r, api == OpenAiApi::kChat);
    for (bool stream : {true, false}) {
      RemoteBackendOptions o;
      o.endpoint = url();
      o.model = "stories";
      o.api = api;
      o.stream = stream;
      RemoteBackend backend(o);
      CancelToken cancel;
      SampleResponse got;
      backend.Run(
          {r}, [&](size_t, SampleResponse resp) { got = std::move(resp); }, cancel);
      ASSERT_TRUE(got.status.ok()) << got.status.ToString();
      ASSERT_EQ(got.samples.size(), 3u);
      for (int i = 0; i < 3; ++i) EXPECT_EQ(got.samples[i].text, expected[i]) << i << stream;
      EXPECT_TRUE(got.timing.usage_reported());
      EXPECT_EQ(got.timing.completion_tokens(), 120);
      EXPECT_EQ(got.timing.streamed(), stream);
    }
  }
  // Sample i of an n-request is the n=1 request with seed + i.
  SampleRequest one = r;
  one.n = 1;
  one.seed = r.seed + 2;
  EXPECT_EQ(Direct(one)[0], Direct(r)[2]);
}

// A chat is the rendered conversation (special tokens parsed), not the messages' text joined.
TEST_F(CoreEndpoint, ChatPromptsAreRenderedInTheChatFormat) {
  CoreRequest chat;
  chat.messages = {{"system", "Be brief."}, {"user", "Once upon a time"}};
  chat.max_tokens = 1;
  auto out = engine_->Generate(chat);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  CoreRequest plain;
  plain.prompt =
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nOnce upon a time<|im_end|>\n"
      "<|im_start|>assistant\n";  // stories260K has no such special tokens: the same as text
  plain.max_tokens = 1;
  auto same = engine_->Generate(plain);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(out->prompt_tokens, same->prompt_tokens);
  EXPECT_EQ(out->completions[0].tokens, same->completions[0].tokens);
  EXPECT_EQ(*engine_->ChatFormatInUse(), "chatml (--chat-format)");
  chat.messages = {{"tool", "x"}};
  auto bad = engine_->Generate(chat);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kInvalidArgument);
}

// The format comes from the file's tokenizer.chat_template when no name is given.
TEST(CoreEngineChat, TheFormatIsRecognisedFromTheFilesTemplate) {
  kernels::RandomModelShape shape;
  shape.architecture = "gemma";
  shape.chat_template =
      "{{ bos_token }}{% for m in messages %}<start_of_turn>{{ m['role'] }}\n{{ m['content'] | "
      "trim }}<end_of_turn>\n{% endfor %}<start_of_turn>model\n";
  const std::string path = "/tmp/evald-chat-" + RandomHex(4) + ".gguf";
  ASSERT_TRUE(kernels::WriteRandomModel(shape, kStories, path).ok());
  auto engine = CoreEngine::Load(path, {});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  EXPECT_EQ((*engine)->ChatFormatInUse()->rfind("tokenizer.chat_template sha256:", 0), 0u)
      << *(*engine)->ChatFormatInUse();
  CoreEngine::Options named;
  named.chat_format = "llama3";  // a name wins over the template
  auto overridden = CoreEngine::Load(path, named);
  ASSERT_TRUE(overridden.ok());
  EXPECT_EQ(*(*overridden)->ChatFormatInUse(), "llama3 (--chat-format)");
  CoreRequest chat;
  chat.messages = {{"user", "Once upon a time"}};
  chat.max_tokens = 2;
  auto out = (*engine)->Generate(chat);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // The template engine's rendering, handed on with the samples (runs store it). A template's
  // one trailing newline is dropped, as Jinja does without keep_trailing_newline.
  const std::string rendered =
      "<start_of_turn>user\nOnce upon a time<end_of_turn>\n<start_of_turn>model";
  EXPECT_EQ(out->prompt_text.substr(out->prompt_text.size() - rendered.size()), rendered);
  CoreBackend backend(std::shared_ptr<CoreEngine>(std::move(*engine)), true);
  SampleRequest r;
  r.user = "Once upon a time";
  r.n = 1;
  r.sampling.max_tokens = 2;
  std::vector<SampleResponse> got(1);
  backend.Run(
      {r}, [&](size_t i, SampleResponse resp) { got[i] = std::move(resp); }, CancelToken());
  ASSERT_TRUE(got[0].status.ok()) << got[0].status.ToString();
  ASSERT_EQ(got[0].samples.size(), 1u);
  EXPECT_EQ(got[0].samples[0].rendered_prompt, out->prompt_text);
  std::remove(path.c_str());
}

// A model without a chat template serves completions; its chats are refused with what to do.
TEST(CoreEngineChat, NoTemplateAndNoFormatIsAClearErrorForChatsOnly) {
  auto engine = CoreEngine::Load(kStories, {});
  ASSERT_TRUE(engine.ok());
  auto format = (*engine)->ChatFormatInUse();
  ASSERT_FALSE(format.ok());
  EXPECT_NE(format.status().message().find("--chat-format"), std::string::npos);
  CoreRequest chat;
  chat.messages = {{"user", "hi"}};
  chat.max_tokens = 1;
  auto out = (*engine)->Generate(chat);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(out.status().message().find("tokenizer.chat_template"), std::string::npos);
  CoreRequest plain;
  plain.prompt = "hi";
  plain.max_tokens = 1;
  EXPECT_TRUE((*engine)->Generate(plain).ok());
  CoreEngine::Options unknown;
  unknown.chat_format = "vicuna";
  EXPECT_FALSE(CoreEngine::Load(kStories, unknown).ok());
}

TEST_F(CoreEndpoint, StreamedDeltasNeverOutrunAStopString) {
  CoreRequest cr;
  cr.prompt = "Once upon a time";
  cr.max_tokens = 60;
  cr.stop = {"Lily"};
  cr.logprobs = 0;
  std::string streamed, covered;  // covered: the text of the tokens whose log-probs went out
  bool finished = false;
  size_t logprobs = 0;
  auto out = engine_->Generate(cr, [&](int, std::string_view delta, const char* finish,
                                       std::span<const kernels::StepLogprobs> steps) {
    streamed += delta;
    for (const auto& step : steps) covered += engine_->TokenPiece(step.chosen.token);
    logprobs += steps.size();
    // A token's log-prob goes out with (or after) its text, never before.
    if (finish) {
      finished = true;
    } else {
      EXPECT_LE(covered.size(), streamed.size());
    }
    return true;
  });
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(finished);
  EXPECT_EQ(logprobs, out->completions[0].tokens.size());
  EXPECT_EQ(streamed, out->completions[0].text);
  EXPECT_EQ(out->completions[0].finish_reason, "stop");
  EXPECT_EQ(streamed.find("Lily"), std::string::npos);
  EXPECT_FALSE(streamed.empty());
}

// A request whose samples could outgrow the engine's memory budget is refused before it runs
// (400, with the figures: a request to make smaller), streamed or not, and the endpoint goes on
// serving.
TEST(CoreEndpointMemory, RequestsBeyondTheBudgetAreRefusedAndServingGoesOn) {
  CoreEngine::Options options;
  // stories260K: 1,280 bytes of F32 cache per position; 128 samples of 500 tokens need ~82 MB.
  options.memory_budget = 8 << 20;
  auto engine = CoreEngine::Load(kStories, options);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  auto routes = std::make_unique<OpenAiRoutes>(std::shared_ptr<CoreEngine>(std::move(*engine)),
                                               "stories", TokenScopes{});
  HttpServerOptions o;
  o.port = 0;
  HttpServer server(o,
                    [](const HttpRequest& r) { return Reply(r, http::status::not_found, "{}"); });
  server.SetLongHandler(&OpenAiRoutes::Matches,
                        [&](const HttpRequest& r, HttpResponder& out) { routes->Handle(r, out); });
  ASSERT_TRUE(server.Start().ok());
  auto post = [&](const std::string& body) {
    return testing::Http(server.port(), "POST", "/v1/completions", "", body);
  };
  for (const char* stream : {"false", "true"}) {
    auto refused =
        post(std::string(R"({"prompt":"Once","n":128,"max_tokens":500,"stream":)") + stream + "}");
    EXPECT_EQ(refused.status, 400) << refused.body;
    EXPECT_NE(refused.body.find("of KV cache (f32)"), std::string::npos) << refused.body;
    EXPECT_NE(refused.body.find("is the budget"), std::string::npos) << refused.body;
  }
  auto served = post(R"({"prompt":"Once","n":2,"max_tokens":4})");
  EXPECT_EQ(served.status, 200) << served.body;
}

// What the official clients send and expect: max_completion_tokens honoured, the usage chunk
// with `"choices": []`, and fields evald does not implement refused by name, not ignored.
TEST_F(CoreEndpoint, OfficialClientFieldsAreHonouredOrRefusedByName) {
  const uint16_t port = server_->port();
  auto post = [&](const std::string& path, const std::string& body) {
    return testing::Http(port, "POST", path, "", body);
  };
  auto limited = post("/v1/chat/completions",
                      R"({"model":"stories","messages":[{"role":"user","content":"Once"}],)"
                      R"("max_completion_tokens":5,"seed":1})");
  ASSERT_EQ(limited.status, 200) << limited.body;
  EXPECT_NE(limited.body.find("\"completion_tokens\":5"), std::string::npos) << limited.body;

  auto streamed =
      post("/v1/completions", R"({"model":"stories","prompt":"Once","max_tokens":3,"stream":true,)"
                              R"("stream_options":{"include_usage":true}})");
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  const size_t done = streamed.body.rfind("data: [DONE]");
  ASSERT_NE(done, std::string::npos);
  const size_t last = streamed.body.rfind("data: {", done);
  ASSERT_NE(last, std::string::npos);
  const std::string usage_chunk = streamed.body.substr(last, done - last);
  EXPECT_NE(usage_chunk.find("\"choices\":[]"), std::string::npos) << usage_chunk;
  EXPECT_NE(usage_chunk.find("\"usage\""), std::string::npos) << usage_chunk;

  for (const char* field : {"echo", "best_of", "tools"}) {
    auto refused =
        post("/v1/completions", std::string(R"({"prompt":"Once",")") + field + R"(":true})");
    EXPECT_EQ(refused.status, 400) << field;
    EXPECT_NE(refused.body.find(std::string("`") + field + "` is not supported"), std::string::npos)
        << refused.body;
  }
  auto unknown = post("/v1/completions", R"({"prompt":"Once","temprature":0.5})");
  EXPECT_EQ(unknown.status, 400);
  EXPECT_NE(unknown.body.find("unknown field `temprature`"), std::string::npos) << unknown.body;
  EXPECT_EQ(post("/v1/completions", R"({"prompt":"Once","max_tokens":2,"user":"u1"})").status, 200);

  // Log-probs in the wrong API's shape or out of range: a 400 saying what each API takes.
  const std::pair<const char*, const char*> bad_logprobs[] = {
      {"/v1/completions", R"("logprobs":true)"},
      {"/v1/completions", R"("logprobs":21)"},
      {"/v1/completions", R"("logprobs":2,"top_logprobs":2)"},
      {"/v1/chat/completions", R"("logprobs":3)"},
      {"/v1/chat/completions", R"("top_logprobs":2)"},
      {"/v1/chat/completions", R"("logprobs":true,"top_logprobs":2.5)"}};
  for (const auto& [path, fields] : bad_logprobs) {
    auto refused = post(path, std::string(R"({"prompt":"Once","messages":[{"role":"user",)") +
                                  R"("content":"Once"}],)" + fields + "}");
    EXPECT_EQ(refused.status, 400) << path << " " << fields << ": " << refused.body;
    EXPECT_NE(refused.body.find("logprobs"), std::string::npos) << refused.body;
  }
}

// The official OpenAI Node client (pinned in scripts/install-deps.sh) against evald's server,
// unmodified: completions with n=2, chat with max_completion_tokens, streams with and without
// the usage chunk, the client's stream helper and finalChatCompletion(), and a 400 that names
// a field evald does not implement.
TEST_F(CoreEndpoint, TheOfficialOpenAiClientWorksUnmodified) {
  if (!IsDirectory(testing::NodeReferenceDir() + "/node_modules/openai"))
    GTEST_SKIP() << "the openai npm client is not installed (scripts/install-deps.sh)";
  auto r = testing::RunNodeReference("openai_client.mjs", testing::ShellQuote(url()) + " stories");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  google::protobuf::Value v;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.output, &v).ok()) << r.output;
  const auto& f = v.struct_value().fields();
  auto field = [&](const std::string& call, const std::string& name) {
    return f.at(call).struct_value().fields().at(name);
  };
  auto tokens = [&](const std::string& call) {
    return field(call, "usage").struct_value().fields().at("completion_tokens").number_value();
  };
  EXPECT_EQ(field("completions", "texts").list_value().values_size(), 2);
  EXPECT_EQ(tokens("completions"), 16);
  EXPECT_EQ(tokens("chat"), 5) << "max_completion_tokens";
  // The same seed and length: the streamed texts are the whole one's.
  const std::string chat5 = field("stream_with_usage", "text").string_value();
  EXPECT_FALSE(chat5.empty());
  EXPECT_EQ(field("stream_without_usage", "text").string_value(), chat5);
  EXPECT_EQ(field("final_chat_completion", "text").string_value(), chat5);
  EXPECT_EQ(field("chat", "text").string_value(), chat5);
  EXPECT_EQ(tokens("stream_with_usage"), 5);
  EXPECT_EQ(field("stream_without_usage", "usage").kind_case(),
            google::protobuf::Value::kNullValue);
  EXPECT_EQ(field("completion_stream", "text").string_value(),
            field("completions", "texts").list_value().values(0).string_value());
  EXPECT_EQ(field("echo", "status").number_value(), 400);
  EXPECT_NE(field("echo", "message").string_value().find("`echo` is not supported"),
            std::string::npos);

  // Log-probs in each API's shape: one entry per generated token, whose texts make the text.
  const google::protobuf::Value lp_value = field("completion_logprobs", "logprobs");
  const auto& lp = lp_value.struct_value().fields();
  ASSERT_TRUE(lp.count("tokens") && lp.count("text_offset")) << r.output;
  const auto& lp_tokens = lp.at("tokens").list_value().values();
  EXPECT_EQ(lp_tokens.size(), tokens("completion_logprobs"));
  std::string joined;
  for (int i = 0; i < lp_tokens.size(); ++i) {
    EXPECT_EQ(lp.at("text_offset").list_value().values(i).number_value(), joined.size());
    joined += lp_tokens[i].string_value();
    const double chosen = lp.at("token_logprobs").list_value().values(i).number_value();
    EXPECT_LE(chosen, 0);
    const auto& top = lp.at("top_logprobs").list_value().values(i).struct_value().fields();
    EXPECT_GE(top.size(), 1u);
    EXPECT_LE(top.size(), 2u);
    double best = -1e30;
    for (const auto& [token, value] : top) best = std::max(best, value.number_value());
    EXPECT_GE(best, chosen - 1e-6) << "the likeliest token is at least as likely as the chosen";
  }
  EXPECT_EQ(joined, field("completion_logprobs", "text").string_value());

  const google::protobuf::Value content_value = field("chat_logprobs", "content");
  const auto& content = content_value.list_value().values();
  EXPECT_EQ(content.size(), tokens("chat_logprobs"));
  joined.clear();
  for (const auto& entry : content) {
    const auto& e = entry.struct_value().fields();
    joined += e.at("token").string_value();
    EXPECT_EQ(e.at("top_logprobs").list_value().values_size(), 2);
    EXPECT_EQ(static_cast<size_t>(e.at("bytes").list_value().values_size()),
              e.at("token").string_value().size());
  }
  EXPECT_EQ(joined, field("chat_logprobs", "text").string_value());
  // Streamed, the same entries arrive spread over the chunks.
  const google::protobuf::Value streamed_value = field("stream_logprobs", "content");
  const auto& streamed = streamed_value.list_value().values();
  ASSERT_EQ(streamed.size(), content.size());
  for (int i = 0; i < streamed.size(); ++i)
    EXPECT_EQ(streamed[i].struct_value().fields().at("logprob").number_value(),
              content[i].struct_value().fields().at("logprob").number_value());
}

TEST_F(CoreEndpoint, BadRequestsGetOpenAiStyleErrors) {
  FakeServer* none = nullptr;
  (void)none;
  RemoteBackendOptions o;
  o.endpoint = url();
  o.model = "no-such-model";
  o.max_attempts = 3;
  RemoteBackend backend(o);
  SampleRequest r;
  r.user = "x";
  CancelToken cancel;
  SampleResponse got;
  backend.Run(
      {r}, [&](size_t, SampleResponse resp) { got = std::move(resp); }, cancel);
  ASSERT_FALSE(got.status.ok());
  EXPECT_NE(got.status.message().find("HTTP 404"), std::string::npos) << got.status.message();
  EXPECT_NE(got.status.message().find("attempt 1 of 3"), std::string::npos);
}

TEST(RecordedBackend, AnswersFromTheFileAndReportsWhatIsMissing) {
  std::string path = "/tmp/evald-recorded-" + RandomHex(4) + ".jsonl";
  ASSERT_TRUE(WriteFileAtomic(path,
                              "{\"problem\":\"A\",\"completion\":\"one\"}\n"
                              "{\"problem\":\"A\",\"completion\":\"two\"}\n"
                              "not json\n"
                              "{\"problem\":\"B\",\"index\":3,\"completion\":\"b3\"}\n")
                  .ok());
  std::vector<std::string> errors;
  auto backend = RecordedBackend::Open(path, &errors);
  ASSERT_TRUE(backend.ok());
  EXPECT_EQ(errors.size(), 1u);
  std::vector<SampleRequest> reqs(3);
  reqs[0].problem = "A";
  reqs[0].first_index = 1;
  reqs[1].problem = "B";
  reqs[1].first_index = 3;
  reqs[2].problem = "B";
  reqs[2].first_index = 0;
  std::vector<SampleResponse> got(3);
  CancelToken cancel;
  (*backend)->Run(
      reqs, [&](size_t i, SampleResponse r) { got[i] = std::move(r); }, cancel);
  ASSERT_TRUE(got[0].status.ok());
  EXPECT_EQ(got[0].samples[0].text, "two");
  EXPECT_EQ(got[1].samples[0].text, "b3");
  EXPECT_FALSE(got[2].status.ok());
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace evald
