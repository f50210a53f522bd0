// What one finished request attempt to an OpenAI-compatible server means, and what to do next:
// pure decisions over what the transfer observed, kept apart from libcurl so that every case
// (a 429 with Retry-After, a stream cut short, a choice that never finished) is tested alone.
#pragma once

#include <string>

namespace evald {

// What the transfer observed; filled by the attempt (remote_attempt.h).
struct AttemptFacts {
  bool transferred = false;        // the transfer completed (libcurl said CURLE_OK)
  bool connection_failed = false;  // refused, reset, nothing received, timed out
  bool timed_out = false;
  std::string transport_error;  // libcurl's words, when not transferred
  bool too_large = false;       // stopped at the response size limit
  long http_status = 0;
  std::string body_error;  // the body or a streamed event was not an OpenAI completion
  bool complete = false;   // [DONE] seen, or a whole response parsed
  int choices = 1;         // n asked for
  int finished_choices = 0;
  int first_unfinished = -1;  // the first choice without a finish reason (-1: none)
};

enum class AttemptResult {
  kSucceeded,
  kRetryable,  // worth another attempt (it counts against the replica)
  kFinal,      // the request itself is wrong, or the response can never fit
};

struct AttemptOutcome {
  AttemptResult result = AttemptResult::kFinal;
  std::string error;  // empty when it succeeded
};

// `max_response_bytes` only for the message.
AttemptOutcome ClassifyAttempt(const AttemptFacts& facts, size_t max_response_bytes);

// What a request whose attempt failed does next.
struct RetryPolicy {
  int max_attempts = 4;
  double backoff_initial_s = 0.5;  // doubled per attempt, up to backoff_max_s
  double backoff_max_s = 30;
};

struct RetryPlan {
  enum class Action {
    kGiveUp,     // final, out of attempts, or stopping
    kRetryNow,   // on another replica that can take it now (no backoff: this one struggles)
    kRetryLater  // on any replica after `delay_s`
  };
  Action action = Action::kGiveUp;
  double delay_s = 0;
};

struct RetryContext {
  AttemptResult result = AttemptResult::kRetryable;
  int attempts_made = 1;
  bool stopping = false;
  bool other_replica_free = false;
  double retry_after_s = -1;  // the server's Retry-After (-1: none); honoured up to 300 s
  double jitter = 1;          // in [0.5, 1]: spreads the retries of many requests apart
};

RetryPlan PlanRetry(const RetryPolicy& policy, const RetryContext& context);

}  // namespace evald
