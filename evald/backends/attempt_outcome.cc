#include "evald/backends/attempt_outcome.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace evald {

namespace {

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

AttemptOutcome Retryable(std::string error) {
  return {AttemptResult::kRetryable, std::move(error)};
}

AttemptOutcome Final(std::string error) {
  return {AttemptResult::kFinal, std::move(error)};
}

AttemptOutcome ClassifyTransportFailure(const AttemptFacts& f, size_t max_response_bytes) {
  if (f.too_large) return Final(fmt::format("response exceeds {} bytes", max_response_bytes));
  if (!f.body_error.empty()) return Retryable(f.body_error);
  return Retryable(f.timed_out ? "timed out: " + f.transport_error : f.transport_error);
}

AttemptOutcome ClassifyBody(const AttemptFacts& f) {
  if (!f.body_error.empty()) return Retryable(f.body_error);
  if (!f.complete) return Retryable("stream ended without [DONE] (truncated)");
  if (f.first_unfinished >= 0)
    return Retryable(fmt::format("choice {} of {} never finished (the server returned {} choices)",
                                 f.first_unfinished, f.choices, f.finished_choices));
  return {AttemptResult::kSucceeded, ""};
}

}  // namespace

AttemptOutcome ClassifyAttempt(const AttemptFacts& f, size_t max_response_bytes) {
  if (!f.transferred) return ClassifyTransportFailure(f, max_response_bytes);
  const long s = f.http_status;
  const std::string status = fmt::format("HTTP {} ({})", s, StatusWords(s));
  if (s == 429 || s == 408 || s >= 500) return Retryable(status);
  if (s != 200) return Final(status);  // the request itself is wrong; asking again will not help
  return ClassifyBody(f);
}

RetryPlan PlanRetry(const RetryPolicy& policy, const RetryContext& c) {
  using Action = RetryPlan::Action;
  if (c.result != AttemptResult::kRetryable || c.attempts_made >= policy.max_attempts || c.stopping)
    return {Action::kGiveUp, 0};
  if (c.other_replica_free) return {Action::kRetryNow, 0};
  double backoff =
      std::min(policy.backoff_max_s, policy.backoff_initial_s * std::pow(2.0, c.attempts_made - 1));
  backoff *= std::clamp(c.jitter, 0.5, 1.0);
  if (c.retry_after_s >= 0) backoff = std::min(std::max(backoff, c.retry_after_s), 300.0);
  return {Action::kRetryLater, backoff};
}

}  // namespace evald
