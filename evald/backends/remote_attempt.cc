#include "evald/backends/remote_attempt.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/clock.h"
#include "base/utf8.h"

namespace evald {

namespace {

double MsSince(RemoteAttempt::Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(RemoteAttempt::Clock::now() - t0).count();
}

// Failures of the connection rather than of the request: the replica itself is in trouble.
bool ConnectionFailed(CURLcode result) {
  switch (result) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT:
      return true;
    default:
      return false;
  }
}

std::string Lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string HeaderValue(const std::string& line) {
  std::string v = line.substr(line.find(':') + 1);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.erase(v.begin());
  while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v;
}

curl_slist* RequestHeaders(const TransferSettings& s) {
  curl_slist* h = curl_slist_append(nullptr, "Content-Type: application/json");
  h = curl_slist_append(h, s.stream ? "Accept: text/event-stream" : "Accept: application/json");
  if (!s.api_key.empty()) h = curl_slist_append(h, ("Authorization: Bearer " + s.api_key).c_str());
  return h;
}

// Where the request may go and how long it may take: the checked addresses only.
void SetTransferLimits(CURL* e, const TransferSettings& s) {
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(s.request_timeout_s * 1000));
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(s.connect_timeout_s * 1000));
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, std::max(1L, static_cast<long>(s.stall_timeout_s)));
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_PROXY, "");  // not the environment's: only the checked address
  if (s.resolve) curl_easy_setopt(e, CURLOPT_RESOLVE, s.resolve);
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
}

}  // namespace

RemoteAttempt::~RemoteAttempt() {
  if (easy_) curl_easy_cleanup(easy_);
  if (headers_) curl_slist_free_all(headers_);
}

CURL* RemoteAttempt::Open(const SampleRequest& r, const std::string& url,
                          const TransferSettings& s) {
  n_ = std::max(1, r.n);
  chat_ = s.api == OpenAiApi::kChat;
  max_bytes_ = s.max_response_bytes;
  texts_.assign(static_cast<size_t>(n_), "");
  finish_.assign(static_cast<size_t>(n_), "");
  last_text_ms_.assign(static_cast<size_t>(n_), -1);
  timing_.set_ttft_ms(-1);
  timing_.set_streamed(s.stream);
  timing_.set_samples(n_);
  timing_.set_start_unix_ms(UnixMillis());
  body_ = BuildCompletionRequestJson(r, s.model, s.api, s.stream);
  headers_ = RequestHeaders(s);
  easy_ = curl_easy_init();
  CURL* e = easy_;
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_POST, 1L);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, body_.c_str());
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body_.size()));
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers_);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &RemoteAttempt::OnBody);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, this);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &RemoteAttempt::OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, this);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf_);
  SetTransferLimits(e, s);
  t0_ = Clock::now();
  return e;
}

size_t RemoteAttempt::OnBody(char* ptr, size_t size, size_t nmemb, void* self) {
  return static_cast<RemoteAttempt*>(self)->TakeBody(std::string_view(ptr, size * nmemb));
}

size_t RemoteAttempt::OnHeader(char* ptr, size_t size, size_t nmemb, void* self) {
  static_cast<RemoteAttempt*>(self)->TakeHeader(std::string(ptr, size * nmemb));
  return size * nmemb;
}

size_t RemoteAttempt::TakeBody(std::string_view bytes) {
  received_ += bytes.size();
  if (received_ > max_bytes_) {
    too_large_ = true;
    return 0;  // aborts the transfer
  }
  long status = 0;
  curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200 || !event_stream_) {
    raw_.append(bytes);
    return bytes.size();
  }
  if (!sse_.Feed(bytes, [this](std::string_view data) { OnEvent(data); })) {
    body_error_ = "a streamed event exceeds the size limit";
    return 0;
  }
  return bytes.size();
}

void RemoteAttempt::TakeHeader(const std::string& line) {
  const std::string lower = Lowercase(line);
  if (lower.rfind("http/", 0) == 0) {  // a new response (after a 100-continue)
    event_stream_ = false;
    retry_after_s_ = -1;
  } else if (lower.rfind("content-type:", 0) == 0) {
    event_stream_ = lower.find("text/event-stream") != std::string::npos;
  } else if (lower.rfind("retry-after:", 0) == 0) {
    try {
      retry_after_s_ = std::stod(HeaderValue(line));
    } catch (...) {
      retry_after_s_ = -1;  // an HTTP date: use our own backoff
    }
  }
}

void RemoteAttempt::OnEvent(std::string_view data) {
  if (data == "[DONE]") {
    complete_ = true;
    return;
  }
  auto chunk = ParseCompletionResponse(data);
  if (!chunk.ok()) {
    if (body_error_.empty()) body_error_ = "a streamed event is not an OpenAI completion";
    return;
  }
  if (chunk->has_error()) {
    if (body_error_.empty()) body_error_ = "the server sent an error object in the stream";
    return;
  }
  Absorb(*chunk);
}

void RemoteAttempt::Absorb(const openai::CompletionResponse& r) {
  const double now = MsSince(t0_);
  bool any_text = false;
  for (const auto& c : r.choices()) {
    if (c.index() < 0 || c.index() >= n_) {
      if (body_error_.empty())
        body_error_ = fmt::format("choice index {} outside 0..{}", c.index(), n_ - 1);
      continue;
    }
    const std::string& text =
        chat_ ? (c.has_delta() ? c.delta().content() : c.message().content()) : c.text();
    if (!text.empty()) {
      texts_[c.index()] += text;
      any_text = true;
      double& last = last_text_ms_[c.index()];
      if (last >= 0) timing_.add_itl_ms(static_cast<float>(now - last));
      last = now;
    }
    if (!c.finish_reason().empty()) finish_[c.index()] = c.finish_reason();
  }
  if (r.has_usage()) {
    usage_ = r.usage();
    has_usage_ = true;
  }
  if (any_text) {
    if (timing_.ttft_ms() < 0) timing_.set_ttft_ms(now);
    ++text_chunks_;
  }
}

// A whole response (asked for, or a server that does not stream).
void RemoteAttempt::ReadWholeBody() {
  auto whole = ParseCompletionResponse(raw_);
  if (!whole.ok()) {
    body_error_ = "the response is not an OpenAI completion";
  } else if (whole->has_error()) {
    body_error_ = "the server answered with an error object";
  } else {
    Absorb(*whole);
    complete_ = true;
    timing_.set_streamed(false);
  }
}

AttemptFacts RemoteAttempt::Observe(CURLcode result) {
  AttemptFacts f;
  f.transferred = result == CURLE_OK;
  f.connection_failed = ConnectionFailed(result);
  f.timed_out = result == CURLE_OPERATION_TIMEDOUT;
  f.transport_error = errbuf_[0] ? errbuf_ : curl_easy_strerror(result);
  f.too_large = too_large_;
  curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &f.http_status);
  if (f.transferred && f.http_status == 200) {
    if (event_stream_) {
      sse_.Finish([this](std::string_view data) { OnEvent(data); });
    } else {
      ReadWholeBody();
    }
  }
  f.body_error = body_error_;
  f.complete = complete_;
  f.choices = n_;
  for (int i = 0; i < n_; ++i) {
    if (!finish_[i].empty()) {
      ++f.finished_choices;
    } else if (f.first_unfinished < 0) {
      f.first_unfinished = i;
    }
  }
  return f;
}

SampleResponse RemoteAttempt::Response(const std::string& endpoint_shown) {
  SampleResponse resp;
  if (!endpoint_shown.empty()) timing_.set_endpoint(endpoint_shown);
  timing_.set_e2e_ms(MsSince(t0_));
  if (timing_.ttft_ms() < 0) timing_.set_ttft_ms(timing_.e2e_ms());
  timing_.set_attempts(attempt_);
  timing_.set_usage_reported(has_usage_);
  timing_.set_prompt_tokens(has_usage_ ? usage_.prompt_tokens() : 0);
  timing_.set_completion_tokens(has_usage_ ? usage_.completion_tokens() : text_chunks_);
  for (int i = 0; i < n_; ++i) {
    GeneratedSample s;
    s.text = SanitizeUtf8(texts_[i]);
    s.finish_reason = finish_[i];
    if (n_ == 1 && has_usage_) s.completion_tokens = usage_.completion_tokens();
    resp.samples.push_back(std::move(s));
  }
  resp.timing = std::move(timing_);
  return resp;
}

}  // namespace evald
