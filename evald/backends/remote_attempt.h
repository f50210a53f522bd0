// One attempt of one request to an OpenAI-compatible server: a libcurl easy handle configured
// as the operator's policy demands (the checked addresses only, no proxy, no redirect), and
// everything received so far - streamed (SSE) choices with their timing, or a whole body.
// Finished, it says what it observed (AttemptFacts, for attempt_outcome.h) and, when that was
// a success, the response.
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "evald/backends/attempt_outcome.h"
#include "evald/backends/openai_wire.h"
#include "evald/backends/sampling_backend.h"
#include "evald/backends/sse_parser.h"

namespace evald {

// How every attempt's transfer is set up (from RemoteBackendOptions).
struct TransferSettings {
  std::string model;
  OpenAiApi api = OpenAiApi::kCompletions;
  std::string api_key;
  bool stream = true;
  double request_timeout_s = 600, connect_timeout_s = 10, stall_timeout_s = 120;
  size_t max_response_bytes = 64u << 20;
  curl_slist* resolve = nullptr;  // CURLOPT_RESOLVE entries (owned by the backend)
};

class RemoteAttempt {
 public:
  using Clock = std::chrono::steady_clock;

  RemoteAttempt(size_t request, int replica, int attempt) noexcept
      : request_(request), replica_(replica), attempt_(attempt) {}
  ~RemoteAttempt();
  RemoteAttempt(const RemoteAttempt&) = delete;
  RemoteAttempt& operator=(const RemoteAttempt&) = delete;

  // Builds the request body and the easy handle for POST `url`; the caller adds the handle to
  // its multi handle.
  CURL* Open(const SampleRequest& request, const std::string& url, const TransferSettings& s);

  // After the transfer ended with `result`: finishes reading the body and says what it saw.
  AttemptFacts Observe(CURLcode result);
  // The response of an attempt whose facts classified as a success.
  SampleResponse Response(const std::string& endpoint_shown);

  size_t request() const { return request_; }
  int replica() const { return replica_; }
  int attempt() const { return attempt_; }
  double retry_after_s() const { return retry_after_s_; }
  CURL* easy() const { return easy_; }

 private:
  static size_t OnBody(char* ptr, size_t size, size_t nmemb, void* self);
  static size_t OnHeader(char* ptr, size_t size, size_t nmemb, void* self);
  size_t TakeBody(std::string_view bytes);
  void TakeHeader(const std::string& line);
  void OnEvent(std::string_view data);
  // Takes the choices and usage of a streamed chunk or of a whole response.
  void Absorb(const openai::CompletionResponse& r);
  void ReadWholeBody();

  const size_t request_;
  const int replica_;
  const int attempt_;
  int n_ = 1;
  bool chat_ = false;
  CURL* easy_ = nullptr;
  curl_slist* headers_ = nullptr;
  std::string body_;
  std::string raw_;  // the whole body when not streaming, or an error body
  size_t received_ = 0, max_bytes_ = 0;
  bool too_large_ = false;
  bool event_stream_ = false;  // Content-Type said text/event-stream
  double retry_after_s_ = -1;
  SseParser sse_;
  Clock::time_point t0_;
  std::vector<double> last_text_ms_;  // per choice: ITL is measured within each sequence
  bool complete_ = false;
  std::string body_error_;
  std::vector<std::string> texts_, finish_;
  openai::Usage usage_;
  bool has_usage_ = false;
  int text_chunks_ = 0;
  v1::RequestTiming timing_;
  char errbuf_[CURL_ERROR_SIZE] = {0};
};

}  // namespace evald
