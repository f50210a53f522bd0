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
#include "evald/backends/attempt_outcome.h"
#include "evald/backends/remote_attempt.h"

namespace evald {

namespace {

using Clock = std::chrono::steady_clock;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
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
  transfer_ = {options_.model,
               options_.api,
               options_.api_key,
               options_.stream,
               options_.request_timeout_s,
               options_.connect_timeout_s,
               options_.stall_timeout_s,
               options_.max_response_bytes,
               resolve_};
  retry_ = {options_.max_attempts, options_.backoff_initial_s, options_.backoff_max_s};
  std::vector<std::string> bases = {options_.endpoint};
  bases.insert(bases.end(), options_.replicas.begin(), options_.replicas.end());
  for (const std::string& base : bases) {
    Replica r;
    r.url = OpenAiEndpointUrl(base, options_.api);
    r.shown = RedactUrl(r.url);
    EndpointHealth health;
    health.endpoint = r.shown;
    replicas_.push_back(std::move(r));
    MutexLock lock(health_mu_);
    health_.push_back(std::move(health));
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
  MutexLock lock(health_mu_);
  if (health_.size() < 2) return {};
  return health_;
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

bool RemoteBackend::RecordFailure(int i, bool connection_failed, const std::string& error) {
  Replica& r = replicas_[i];
  {
    MutexLock lock(health_mu_);
    ++health_[i].failed_attempts;
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
    MutexLock lock(health_mu_);
    ++health_[i].times_taken_out;
  }
  spdlog::warn("replica {} taken out for {:.0f} s: {}", r.shown, out_s, error);
  return true;
}

// One Run's requests: those waiting for an attempt (new, or retrying after a backoff) and the
// attempts in flight on the multi handle.
struct RemoteBackend::Transfers {
  struct Waiting {
    size_t request;
    int attempts_made;
    Clock::time_point not_before;
    int avoid = -1;  // the replica its last attempt failed on
  };
  const std::vector<SampleRequest>& requests;
  const std::function<void(size_t, SampleResponse)>& done;
  const CancelToken& cancel;
  std::deque<Waiting> waiting;
  std::map<CURL*, std::unique_ptr<RemoteAttempt>> active;
  std::mt19937_64 jitter{std::random_device{}()};
  CURLM* multi = curl_multi_init();
  ~Transfers() { curl_multi_cleanup(multi); }
};

void RemoteBackend::Run(const std::vector<SampleRequest>& requests,
                        const std::function<void(size_t, SampleResponse)>& done,
                        const CancelToken& cancel) {
  Transfers t{requests, done, cancel, {}, {}};
  for (size_t i = 0; i < requests.size(); ++i) t.waiting.push_back({i, 0, Clock::now(), -1});
  while (!t.waiting.empty() || !t.active.empty()) {
    if (cancel.stopped()) return CancelAll(t);
    const Clock::time_point next_due = StartDue(t);
    int running = 0;
    curl_multi_perform(t.multi, &running);
    CollectFinished(t);
    const int wait_ms = static_cast<int>(std::clamp<int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(next_due - Clock::now()).count(), 1,
        200));
    curl_multi_poll(t.multi, nullptr, 0, wait_ms, nullptr);
  }
}

Clock::time_point RemoteBackend::StartDue(Transfers& t) {
  const auto now = Clock::now();
  Clock::time_point next_due = now + std::chrono::milliseconds(200);
  for (const Replica& rep : replicas_)
    if (rep.out_until > now) next_due = std::min(next_due, rep.out_until);
  for (auto it = t.waiting.begin(); it != t.waiting.end();) {
    const int replica = it->not_before <= now ? PickReplica(it->avoid, now) : -1;
    if (replica >= 0) {
      StartAttempt(t, it->request, it->attempts_made + 1, replica);
      it = t.waiting.erase(it);
    } else {
      if (it->not_before > now) next_due = std::min(next_due, it->not_before);
      ++it;
    }
  }
  return next_due;
}

void RemoteBackend::StartAttempt(Transfers& t, size_t request, int attempt, int replica) {
  auto a = std::make_unique<RemoteAttempt>(request, replica, attempt);
  ++replicas_[replica].active;
  CURL* easy = a->Open(t.requests[request], replicas_[replica].url, transfer_);
  curl_multi_add_handle(t.multi, easy);
  t.active[easy] = std::move(a);
}

void RemoteBackend::CollectFinished(Transfers& t) {
  int queued = 0;
  while (CURLMsg* msg = curl_multi_info_read(t.multi, &queued)) {
    if (msg->msg != CURLMSG_DONE) continue;
    CURL* easy = msg->easy_handle;
    const CURLcode result = msg->data.result;
    curl_multi_remove_handle(t.multi, easy);
    auto it = t.active.find(easy);
    if (it == t.active.end()) continue;
    std::unique_ptr<RemoteAttempt> a = std::move(it->second);
    t.active.erase(it);
    Conclude(t, *a, result);
  }
}

void RemoteBackend::Conclude(Transfers& t, RemoteAttempt& a, CURLcode result) {
  Replica& replica = replicas_[a.replica()];
  --replica.active;
  const AttemptFacts facts = a.Observe(result);
  const AttemptOutcome outcome = ClassifyAttempt(facts, options_.max_response_bytes);
  if (outcome.result == AttemptResult::kSucceeded) {
    replica.failures_in_row = replica.times_out_in_row = 0;
    {
      MutexLock lock(health_mu_);
      ++health_[a.replica()].completed_requests;
    }
    return t.done(a.request(), a.Response(replicas_.size() > 1 ? replica.shown : ""));
  }
  const std::string error = fmt::format("{} (POST {}, attempt {} of {})", outcome.error,
                                        replica.shown, a.attempt(), options_.max_attempts);
  if (outcome.result == AttemptResult::kRetryable)
    RecordFailure(a.replica(), facts.connection_failed, error);
  RetryContext context;
  context.result = outcome.result;
  context.attempts_made = a.attempt();
  context.stopping = t.cancel.stopped();
  const int other = PickReplica(a.replica(), Clock::now());
  context.other_replica_free = other >= 0 && other != a.replica();
  context.retry_after_s = a.retry_after_s();
  context.jitter = std::uniform_real_distribution<double>(0.5, 1.0)(t.jitter);
  const RetryPlan plan = PlanRetry(retry_, context);
  if (plan.action == RetryPlan::Action::kGiveUp) {
    SampleResponse resp;
    resp.status = Status::Unavailable(error);
    resp.timing.set_attempts(a.attempt());
    return t.done(a.request(), std::move(resp));
  }
  const SampleRequest& r = t.requests[a.request()];
  const bool now = plan.action == RetryPlan::Action::kRetryNow;
  spdlog::warn(
      "{} sample {}: {}; {}", r.problem, r.first_index, error,
      now ? "retrying on another replica" : fmt::format("retrying in {:.1f} s", plan.delay_s));
  t.waiting.push_back(
      {a.request(), a.attempt(),
       Clock::now() + std::chrono::microseconds(static_cast<int64_t>(plan.delay_s * 1e6)),
       a.replica()});
}

// Every request still waiting or in flight is answered Cancelled.
void RemoteBackend::CancelAll(Transfers& t) {
  auto cancelled = [&](size_t request) {
    SampleResponse resp;
    resp.status = Status::Cancelled("cancelled");
    t.done(request, std::move(resp));
  };
  for (auto& [easy, a] : t.active) {
    curl_multi_remove_handle(t.multi, easy);
    --replicas_[a->replica()].active;
    cancelled(a->request());
  }
  t.active.clear();
  for (const auto& w : t.waiting) cancelled(w.request);
  t.waiting.clear();
}

}  // namespace evald
