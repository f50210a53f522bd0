// Samples from an OpenAI-compatible server (vLLM on GPU or TPU, llama.cpp's server, evald's own
// endpoints, ...) through libcurl's multi interface: one thread drives every transfer, at most
// `max_concurrency` in flight. Each request asks for n choices with every sampling parameter
// explicit, streams (SSE) so that time to first token and inter-token latency are measured, and
// is retried with exponential backoff on 429, 5xx, timeouts, refused or dropped connections,
// malformed bodies and truncated streams. The API key goes only into the Authorization header.
#pragma once

#include <string>

#include "evald/backends/openai_wire.h"
#include "evald/backends/sampling_backend.h"

namespace evald {

struct RemoteBackendOptions {
  std::string endpoint;  // base URL: http://host:port, http://host:port/v1, https://...
  std::string model;     // the server's model name
  OpenAiApi api = OpenAiApi::kCompletions;
  std::string api_key;  // sent as a bearer token; never logged or stored
  int max_concurrency = 8;
  double request_timeout_s = 600;  // per attempt
  double connect_timeout_s = 10;
  double stall_timeout_s = 120;  // an attempt that receives nothing for this long fails
  int max_attempts = 4;
  double backoff_initial_s = 0.5;  // doubled per attempt, with jitter, up to backoff_max_s
  double backoff_max_s = 30;
  bool stream = true;
  size_t max_response_bytes = 64u << 20;
};

class RemoteBackend : public SamplingBackend {
 public:
  explicit RemoteBackend(RemoteBackendOptions options);
  std::string Kind() const override { return "remote"; }
  std::string Describe() const override;
  void Run(const std::vector<SampleRequest>& requests,
           const std::function<void(size_t, SampleResponse)>& done,
           const std::atomic<bool>& cancel) override;

  const std::string& url() const { return url_; }

 private:
  RemoteBackendOptions options_;
  std::string url_;
};

// The endpoint URL for `api` under a base URL (".../v1" is added unless the base ends in it).
std::string OpenAiEndpointUrl(const std::string& base, OpenAiApi api);
// A URL fit for logs and error messages: user:password@ removed.
std::string RedactUrl(const std::string& url);

}  // namespace evald
