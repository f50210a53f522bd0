// Samples from an OpenAI-compatible server (vLLM on GPU or TPU, llama.cpp's server, evald's own
// endpoints, ...) through libcurl's multi interface: one thread drives every transfer, at most
// `max_concurrency` in flight. Each request asks for n choices with every sampling parameter
// explicit, streams (SSE) so that time to first token and inter-token latency are measured, and
// is retried with exponential backoff on 429, 5xx, timeouts, refused or dropped connections,
// malformed bodies and truncated streams. The API key goes only into the Authorization header.
// Several replicas of one model (several base URLs) share the requests: each takes at most
// `max_concurrency` at once, the least busy first; a replica whose connections fail (or that
// fails three attempts in a row) is taken out for a while (5 s, doubling up to 5 min) and its
// requests go to the others at once; it is tried again when its time is up.
#pragma once

#include <curl/curl.h>

#include <string>
#include <vector>

#include "base/thread_annotations.h"
#include "evald/backends/attempt_outcome.h"
#include "evald/backends/openai_wire.h"
#include "evald/backends/remote_attempt.h"
#include "evald/backends/sampling_backend.h"

namespace evald {

struct RemoteBackendOptions {
  std::string endpoint;  // base URL: http://host:port, http://host:port/v1, https://...
  std::vector<std::string> replicas;  // further base URLs serving the same model
  std::string model;                  // the server's model name
  OpenAiApi api = OpenAiApi::kCompletions;
  std::string api_key;             // sent as a bearer token; never logged or stored
  int max_concurrency = 8;         // per replica
  double request_timeout_s = 600;  // per attempt
  double connect_timeout_s = 10;
  double stall_timeout_s = 120;  // an attempt that receives nothing for this long fails
  int max_attempts = 4;
  double backoff_initial_s = 0.5;  // doubled per attempt, with jitter, up to backoff_max_s
  double backoff_max_s = 30;
  double replica_out_s = 5;  // first time out for a failing replica (doubles, at most 300 s)
  bool stream = true;
  size_t max_response_bytes = 64u << 20;
  // "host:port:addr[,addr]" entries (libcurl's CURLOPT_RESOLVE): the addresses the endpoints
  // were checked at (operator_policy.h), the only ones connected to. No proxy is used and no
  // redirect followed, so a request goes where it was checked to go.
  std::vector<std::string> resolve;
};

class RemoteBackend : public SamplingBackend {
 public:
  explicit RemoteBackend(RemoteBackendOptions options);
  ~RemoteBackend() override;
  RemoteBackend(const RemoteBackend&) = delete;
  RemoteBackend& operator=(const RemoteBackend&) = delete;
  std::string Kind() const override { return "remote"; }
  std::string Describe() const override;
  std::string PromptFormat() const override {
    return options_.api == OpenAiApi::kChat ? "chat (the server's template)" : "completions";
  }
  void Run(const std::vector<SampleRequest>& requests,
           const std::function<void(size_t, SampleResponse)>& done,
           const CancelToken& cancel) override;

  const std::string& url() const { return replicas_.front().url; }
  std::vector<EndpointHealth> Health() const override EXCLUDES(health_mu_);

 private:
  struct Replica {
    std::string url, shown;  // shown: without credentials
    int active = 0;
    int failures_in_row = 0;
    int times_out_in_row = 0;
    std::chrono::steady_clock::time_point out_until{};
  };

  using Clock = std::chrono::steady_clock;
  struct Transfers;  // one Run's waiting requests and attempts in flight

  // Starts the waiting requests that are due and have a replica; when the next one is due.
  Clock::time_point StartDue(Transfers& t);
  void StartAttempt(Transfers& t, size_t request, int attempt, int replica);
  void CollectFinished(Transfers& t);
  // One finished attempt: its response, a retry as planned, or the request's final error.
  void Conclude(Transfers& t, RemoteAttempt& attempt, CURLcode result);
  void CancelAll(Transfers& t);
  // The replica for a new attempt: not out, under its cap, the least busy, `avoid` last.
  int PickReplica(int avoid, Clock::time_point now) const;
  // Records a failed attempt on replica `i`; true when the replica was taken out.
  bool RecordFailure(int i, bool connection_failed, const std::string& error) EXCLUDES(health_mu_);

  RemoteBackendOptions options_;
  TransferSettings transfer_;      // from options_
  RetryPolicy retry_;              // from options_
  std::vector<Replica> replicas_;  // used by the thread in Run only
  mutable Mutex health_mu_;
  std::vector<EndpointHealth> health_ GUARDED_BY(health_mu_);  // per replica; read by Health()
  curl_slist* resolve_ = nullptr;                              // options_.resolve for libcurl
};

// The endpoint URL for `api` under a base URL (".../v1" is added unless the base ends in it).
std::string OpenAiEndpointUrl(const std::string& base, OpenAiApi api);
// A URL fit for logs and error messages: user:password@ removed.
std::string RedactUrl(const std::string& url);

}  // namespace evald
