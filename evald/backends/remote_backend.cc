#include "evald/backends/remote_backend.h"

#include <curl/curl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>

#include "base/clock.h"
#include "base/utf8.h"
#include "evald/backends/sse_parser.h"

namespace evald {

namespace {

using Clock = std::chrono::steady_clock;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

double MsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// One attempt of one request: a curl easy handle and everything received so far.
struct Attempt {
  size_t request = 0;
  int replica = 0;
  int attempt = 1;
  int n = 1;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string body;
  std::string raw;  // the whole body when not streaming, or an error body
  size_t received = 0;
  size_t max_bytes = 0;
  bool too_large = false;
  bool chat = false;
  bool event_stream = false;  // Content-Type said text/event-stream
  bool header_seen = false;
  double retry_after_s = -1;
  SseParser sse;
  Clock::time_point t0;
  std::vector<double> last_text_ms;  // per choice: ITL is measured within each sequence
  bool saw_done = false;
  std::string stream_error;
  std::vector<std::string> texts;
  std::vector<std::string> finish;
  openai::Usage usage;
  bool has_usage = false;
  int text_chunks = 0;
  v1::RequestTiming timing;
  char errbuf[CURL_ERROR_SIZE] = {0};

  ~Attempt() {
    if (easy) curl_easy_cleanup(easy);
    if (headers) curl_slist_free_all(headers);
  }

  void OnEvent(std::string_view data) {
    if (data == "[DONE]") {
      saw_done = true;
      return;
    }
    auto chunk = ParseCompletionResponse(data);
    if (!chunk.ok()) {
      if (stream_error.empty()) stream_error = "a streamed event is not an OpenAI completion";
      return;
    }
    if (chunk->has_error()) {
      if (stream_error.empty()) stream_error = "the server sent an error object in the stream";
      return;
    }
    Absorb(*chunk);
  }

  // Takes the choices and usage of a chunk or of a whole response.
  void Absorb(const openai::CompletionResponse& r) {
    const double now = MsBetween(t0, Clock::now());
    bool any_text = false;
    for (const auto& c : r.choices()) {
      if (c.index() < 0 || c.index() >= n) {
        if (stream_error.empty())
          stream_error = fmt::format("choice index {} outside 0..{}", c.index(), n - 1);
        continue;
      }
      const std::string& text =
          chat ? (c.has_delta() ? c.delta().content() : c.message().content()) : c.text();
      if (!text.empty()) {
        texts[c.index()] += text;
        any_text = true;
        double& last = last_text_ms[c.index()];
        if (last >= 0) timing.add_itl_ms(static_cast<float>(now - last));
        last = now;
      }
      if (!c.finish_reason().empty()) finish[c.index()] = c.finish_reason();
    }
    if (r.has_usage()) {
      usage = r.usage();
      has_usage = true;
    }
    if (any_text) {
      if (timing.ttft_ms() < 0) timing.set_ttft_ms(now);
      ++text_chunks;
    }
  }
};

size_t OnBody(char* ptr, size_t size, size_t nmemb, void* user) {
  auto* a = static_cast<Attempt*>(user);
  const size_t len = size * nmemb;
  a->received += len;
  if (a->received > a->max_bytes) {
    a->too_large = true;
    return 0;  // aborts the transfer
  }
  long status = 0;
  curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &status);
  if (status == 200 && a->event_stream) {
    if (!a->sse.Feed(std::string_view(ptr, len),
                     [a](std::string_view data) { a->OnEvent(data); })) {
      a->stream_error = "a streamed event exceeds the size limit";
      return 0;
    }
  } else {
    a->raw.append(ptr, len);
  }
  return len;
}

size_t OnHeader(char* ptr, size_t size, size_t nmemb, void* user) {
  auto* a = static_cast<Attempt*>(user);
  std::string line(ptr, size * nmemb);
  std::string lower = line;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto value = [&] {
    std::string v = line.substr(line.find(':') + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.erase(v.begin());
    while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.pop_back();
    return v;
  };
  if (lower.rfind("http/", 0) == 0) {  // a new response (after a redirect or 100-continue)
    a->event_stream = false;
    a->retry_after_s = -1;
  } else if (lower.rfind("content-type:", 0) == 0) {
    a->event_stream = lower.find("text/event-stream") != std::string::npos;
  } else if (lower.rfind("retry-after:", 0) == 0) {
    try {
      a->retry_after_s = std::stod(value());
    } catch (...) {
      a->retry_after_s = -1;  // an HTTP date: use our own backoff
    }
  }
  return size * nmemb;
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

// What an HTTP status means, in evald's words: a backend's error body is never stored or shown
// (an endpoint may answer with anything, and a run's record is readable with a read token).
std::string StatusWords(long status) {
  if (status == 429) return "rate limited";
  if (status == 408) return "request timeout";
  if (status == 401 || status == 403) return "the server refused the credentials";
  if (status == 404) return "no such endpoint or model";
  if (status >= 500) return "server error";
  if (status >= 400) return "the server refused the request";
  return "unexpected status";
}

}  // namespace

std::string OpenAiEndpointUrl(const std::string& base, OpenAiApi api) {
  std::string url = base;
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.size() < 3 || url.compare(url.size() - 3, 3, "/v1") != 0) url += "/v1";
  return url + (api == OpenAiApi::kChat ? "/chat/completions" : "/completions");
}

std::string RedactUrl(const std::string& url) {
  size_t scheme = url.find("://");
  size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  size_t end = url.find('/', start);
  size_t at = url.rfind('@', end == std::string::npos ? url.size() : end);
  if (at == std::string::npos || at < start) return url;
  return url.substr(0, start) + url.substr(at + 1);
}

RemoteBackend::RemoteBackend(RemoteBackendOptions options) : options_(std::move(options)) {
  GlobalInit();
  for (const std::string& entry : options_.resolve)
    resolve_ = curl_slist_append(resolve_, entry.c_str());
  std::vector<std::string> bases = {options_.endpoint};
  bases.insert(bases.end(), options_.replicas.begin(), options_.replicas.end());
  for (const std::string& base : bases) {
    Replica r;
    r.url = OpenAiEndpointUrl(base, options_.api);
    r.shown = RedactUrl(r.url);
    r.health.endpoint = r.shown;
    replicas_.push_back(std::move(r));
  }
}

RemoteBackend::~RemoteBackend() {
  if (resolve_) curl_slist_free_all(resolve_);
}

std::string RemoteBackend::Describe() const {
  std::string urls;
  for (const Replica& r : replicas_) urls += (urls.empty() ? "" : ", ") + r.shown;
  return urls + " model=" + options_.model;
}

std::vector<EndpointHealth> RemoteBackend::Health() const {
  std::lock_guard<std::mutex> lock(health_mu_);
  std::vector<EndpointHealth> out;
  if (replicas_.size() < 2) return out;
  for (const Replica& r : replicas_) out.push_back(r.health);
  return out;
}

int RemoteBackend::PickReplica(int avoid, Clock::time_point now) const {
  const int cap = std::clamp(options_.max_concurrency, 1, 1024);
  int best = -1, best_score = 0;
  for (int i = 0; i < static_cast<int>(replicas_.size()); ++i) {
    const Replica& r = replicas_[i];
    if (r.active >= cap || r.out_until > now) continue;
    const int score = r.active + (i == avoid ? 100000 : 0);
    if (best < 0 || score < best_score) best = i, best_score = score;
  }
  return best;
}

bool RemoteBackend::RecordFailure(Replica& r, bool connection_failed, const std::string& error) {
  {
    std::lock_guard<std::mutex> lock(health_mu_);
    ++r.health.failed_attempts;
  }
  ++r.failures_in_row;
  // One endpoint alone is never taken out: its retries' backoff is what spares it.
  if (replicas_.size() < 2 || (!connection_failed && r.failures_in_row < 3)) return false;
  if (r.out_until > Clock::now()) return true;  // attempts that were in flight when it went out
  const double out_s =
      std::min(300.0, options_.replica_out_s * std::pow(2.0, std::min(r.times_out_in_row, 10)));
  ++r.times_out_in_row;
  r.failures_in_row = 0;
  r.out_until = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(out_s * 1000));
  {
    std::lock_guard<std::mutex> lock(health_mu_);
    ++r.health.times_taken_out;
  }
  spdlog::warn("replica {} taken out for {:.0f} s: {}", r.shown, out_s, error);
  return true;
}

void RemoteBackend::Run(const std::vector<SampleRequest>& requests,
                        const std::function<void(size_t, SampleResponse)>& done,
                        const CancelToken& cancel) {
  struct Waiting {
    size_t request;
    int attempts_made;
    Clock::time_point not_before;
    std::string last_error;
    int avoid = -1;  // the replica its last attempt failed on
  };
  std::deque<Waiting> waiting;
  for (size_t i = 0; i < requests.size(); ++i) waiting.push_back({i, 0, Clock::now(), "", -1});
  std::map<CURL*, std::unique_ptr<Attempt>> active;
  std::map<size_t, std::string> last_errors;
  std::mt19937_64 jitter(std::random_device{}());
  CURLM* multi = curl_multi_init();

  auto start = [&](const Waiting& w, int replica) {
    const SampleRequest& r = requests[w.request];
    auto a = std::make_unique<Attempt>();
    a->request = w.request;
    a->replica = replica;
    ++replicas_[replica].active;
    a->attempt = w.attempts_made + 1;
    a->n = std::max(1, r.n);
    a->chat = options_.api == OpenAiApi::kChat;
    a->max_bytes = options_.max_response_bytes;
    a->texts.assign(static_cast<size_t>(a->n), "");
    a->finish.assign(static_cast<size_t>(a->n), "");
    a->last_text_ms.assign(static_cast<size_t>(a->n), -1);
    a->timing.set_ttft_ms(-1);
    a->timing.set_streamed(options_.stream);
    a->timing.set_samples(a->n);
    a->timing.set_start_unix_ms(UnixMillis());
    a->body = BuildCompletionRequestJson(r, options_.model, options_.api, options_.stream);
    a->easy = curl_easy_init();
    a->headers = curl_slist_append(a->headers, "Content-Type: application/json");
    a->headers = curl_slist_append(
        a->headers, options_.stream ? "Accept: text/event-stream" : "Accept: application/json");
    if (!options_.api_key.empty())
      a->headers =
          curl_slist_append(a->headers, ("Authorization: Bearer " + options_.api_key).c_str());
    CURL* e = a->easy;
    curl_easy_setopt(e, CURLOPT_URL, replicas_[replica].url.c_str());
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, a->body.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(a->body.size()));
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, a->headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, a.get());
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, a.get());
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, a->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout_s * 1000));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(options_.connect_timeout_s * 1000));
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
                     std::max(1L, static_cast<long>(options_.stall_timeout_s)));
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_PROXY, "");  // not the environment's: only the checked address
    if (resolve_) curl_easy_setopt(e, CURLOPT_RESOLVE, resolve_);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    a->t0 = Clock::now();
    curl_multi_add_handle(multi, e);
    active[e] = std::move(a);
  };

  // Decides what one finished attempt means: the response, or a retry, or a final error.
  auto finish = [&](std::unique_ptr<Attempt> a, CURLcode result) {
    const SampleRequest& r = requests[a->request];
    Replica& replica = replicas_[a->replica];
    --replica.active;
    long status = 0;
    curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &status);
    std::string error;
    bool retry = true;
    if (result != CURLE_OK) {
      if (a->too_large) {
        error = fmt::format("response exceeds {} bytes", options_.max_response_bytes);
        retry = false;
      } else if (!a->stream_error.empty()) {
        error = a->stream_error;
      } else {
        error = a->errbuf[0] ? a->errbuf : curl_easy_strerror(result);
        if (result == CURLE_OPERATION_TIMEDOUT) error = "timed out: " + error;
      }
    } else if (status == 429 || status == 408 || status >= 500) {
      error = fmt::format("HTTP {} ({})", status, StatusWords(status));
    } else if (status != 200) {
      error = fmt::format("HTTP {} ({})", status, StatusWords(status));
      retry = false;  // the request itself is wrong; asking again will not help
    } else {
      if (a->event_stream) {
        a->sse.Finish([&](std::string_view data) { a->OnEvent(data); });
      } else {
        // A whole response (asked for, or a server that does not stream).
        auto whole = ParseCompletionResponse(a->raw);
        if (!whole.ok()) {
          a->stream_error = "the response is not an OpenAI completion";
        } else if (whole->has_error()) {
          a->stream_error = "the server answered with an error object";
        } else {
          a->Absorb(*whole);
          a->saw_done = true;
          a->timing.set_streamed(false);
        }
      }
      if (!a->stream_error.empty()) {
        error = a->stream_error;
      } else if (!a->saw_done) {
        error = "stream ended without [DONE] (truncated)";
      } else {
        for (int i = 0; i < a->n && error.empty(); ++i)
          if (a->finish[i].empty())
            error = fmt::format("choice {} of {} never finished (the server returned {} choices)",
                                i, a->n,
                                std::count_if(a->finish.begin(), a->finish.end(),
                                              [](const std::string& f) { return !f.empty(); }));
      }
    }
    if (error.empty()) {
      SampleResponse resp;
      replica.failures_in_row = replica.times_out_in_row = 0;
      {
        std::lock_guard<std::mutex> lock(health_mu_);
        ++replica.health.completed_requests;
      }
      if (replicas_.size() > 1) a->timing.set_endpoint(replica.shown);
      a->timing.set_e2e_ms(MsBetween(a->t0, Clock::now()));
      if (a->timing.ttft_ms() < 0) a->timing.set_ttft_ms(a->timing.e2e_ms());
      a->timing.set_attempts(a->attempt);
      a->timing.set_usage_reported(a->has_usage);
      a->timing.set_prompt_tokens(a->has_usage ? a->usage.prompt_tokens() : 0);
      a->timing.set_completion_tokens(a->has_usage ? a->usage.completion_tokens() : a->text_chunks);
      for (int i = 0; i < a->n; ++i) {
        GeneratedSample s;
        s.text = SanitizeUtf8(a->texts[i]);
        s.finish_reason = a->finish[i];
        if (a->n == 1 && a->has_usage) s.completion_tokens = a->usage.completion_tokens();
        resp.samples.push_back(std::move(s));
      }
      resp.timing = std::move(a->timing);
      done(a->request, std::move(resp));
      return;
    }
    error = fmt::format("{} (POST {}, attempt {} of {})", error, replica.shown, a->attempt,
                        options_.max_attempts);
    if (retry) RecordFailure(replica, ConnectionFailed(result), error);
    if (retry && a->attempt < options_.max_attempts && !cancel.stopped()) {
      // Another replica that can take it now: no backoff (it is this replica that struggles).
      const int other = PickReplica(a->replica, Clock::now());
      if (other >= 0 && other != a->replica) {
        spdlog::warn("{} sample {}: {}; retrying on another replica", r.problem, r.first_index,
                     error);
        waiting.push_back({a->request, a->attempt, Clock::now(), error, a->replica});
        return;
      }
      double backoff = std::min(options_.backoff_max_s,
                                options_.backoff_initial_s * std::pow(2.0, a->attempt - 1));
      backoff *= std::uniform_real_distribution<double>(0.5, 1.0)(jitter);
      if (a->retry_after_s >= 0) backoff = std::min(std::max(backoff, a->retry_after_s), 300.0);
      spdlog::warn("{} sample {}: {}; retrying in {:.1f} s", r.problem, r.first_index, error,
                   backoff);
      waiting.push_back(
          {a->request, a->attempt,
           Clock::now() + std::chrono::microseconds(static_cast<int64_t>(backoff * 1e6)), error,
           a->replica});
      return;
    }
    SampleResponse resp;
    resp.status = Status::Unavailable(error);
    resp.timing.set_attempts(a->attempt);
    done(a->request, std::move(resp));
  };

  while (!waiting.empty() || !active.empty()) {
    if (cancel.stopped()) {
      for (auto& [easy, a] : active) {
        curl_multi_remove_handle(multi, easy);
        --replicas_[a->replica].active;
        SampleResponse resp;
        resp.status = Status::Cancelled("cancelled");
        done(a->request, std::move(resp));
      }
      active.clear();
      for (const auto& w : waiting) {
        SampleResponse resp;
        resp.status = Status::Cancelled("cancelled");
        done(w.request, std::move(resp));
      }
      waiting.clear();
      break;
    }
    auto now = Clock::now();
    Clock::time_point next_due = now + std::chrono::milliseconds(200);
    for (const Replica& rep : replicas_)
      if (rep.out_until > now) next_due = std::min(next_due, rep.out_until);
    for (auto it = waiting.begin(); it != waiting.end();) {
      const int replica = it->not_before <= now ? PickReplica(it->avoid, now) : -1;
      if (replica >= 0) {
        start(*it, replica);
        it = waiting.erase(it);
      } else {
        if (it->not_before > now) next_due = std::min(next_due, it->not_before);
        ++it;
      }
    }
    int running = 0;
    curl_multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* easy = msg->easy_handle;
      CURLcode result = msg->data.result;
      curl_multi_remove_handle(multi, easy);
      auto it = active.find(easy);
      if (it == active.end()) continue;
      std::unique_ptr<Attempt> a = std::move(it->second);
      active.erase(it);
      finish(std::move(a), result);
    }
    int wait_ms = static_cast<int>(std::clamp<int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(next_due - Clock::now()).count(), 1,
        200));
    curl_multi_poll(multi, nullptr, 0, wait_ms, nullptr);
  }
  curl_multi_cleanup(multi);
}

}  // namespace evald
