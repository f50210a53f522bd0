// Where completions come from. A backend takes requests - n samples of one prompt with explicit
// sampling parameters - and answers each one exactly once, either with its n completions and
// how long they took, or with an error saying why (after the retries the backend allows).
// Implementations: RemoteBackend (an OpenAI-compatible server over libcurl), CoreBackend (evald's
// own decoding core on a GGUF file) and RecordedBackend (completions generated elsewhere).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/cancel_token.h"
#include "base/status.h"
#include "evald/proto/eval.pb.h"

namespace evald {

struct SamplingSettings {
  double temperature = 0.0;
  double top_p = 1.0;
  int top_k = -1;  // -1: off
  double min_p = 0.0;
  int max_tokens = 1024;
  std::vector<std::string> stop;
};

struct SampleRequest {
  std::string problem;  // for logs and the recorded backend
  int first_index = 0;  // the samples are first_index .. first_index + n - 1
  int n = 1;
  uint32_t seed = 0;   // sample first_index + i is drawn with seed + i where the backend can
  std::string system;  // system message ("" for none)
  std::string user;    // the prompt
  SamplingSettings sampling;
};

struct GeneratedSample {
  std::string text;            // valid UTF-8
  std::string finish_reason;   // "stop", "length", or what the server said
  int completion_tokens = -1;  // -1: not counted for this sample alone
  // The text the model read when the backend rendered it itself (the decoding core's chat,
  // by the checkpoint's template); empty where a server renders its own.
  std::string rendered_prompt;
};

struct SampleResponse {
  Status status;                         // not ok: no sample of the request was produced
  std::vector<GeneratedSample> samples;  // n of them when ok
  v1::RequestTiming timing;
};

// How one endpoint of a backend fared (replicas of a remote checkpoint): for per-endpoint
// serving metrics beside the run's.
struct EndpointHealth {
  std::string endpoint;
  int completed_requests = 0;
  int failed_attempts = 0;  // attempts that failed there (retried there or elsewhere)
  int times_taken_out = 0;
};

class SamplingBackend {
 public:
  virtual ~SamplingBackend() = default;
  // "remote", "core" or "recorded".
  virtual std::string Kind() const = 0;
  virtual std::string Describe() const = 0;  // endpoint URL / model path, for the run's record
  // The most samples one request may ask for (the run groups a problem's samples up to it).
  virtual int MaxSamplesPerRequest() const { return 128; }
  // How prompts go to the model (the run records it): "completions", or a chat format.
  virtual std::string PromptFormat() const { return "completions"; }
  // Per endpoint, for backends with several (empty otherwise).
  virtual std::vector<EndpointHealth> Health() const { return {}; }
  // Answers every request: `done(i, response)` exactly once per request i, from any thread
  // (never two calls at once). Returns when all are answered. With `cancel` set, unanswered
  // requests are answered with kCancelled promptly.
  virtual void Run(const std::vector<SampleRequest>& requests,
                   const std::function<void(size_t, SampleResponse)>& done,
                   const CancelToken& cancel) = 0;
};

// A prompt as the completions endpoints take it: the system message, a blank line, the prompt.
std::string CompletionPromptText(const std::string& system, const std::string& user);

// For backends that answer requests one after another in this thread: `answer(request)` for
// each, or kCancelled without asking once `cancel` is set.
void AnswerInTurn(const std::vector<SampleRequest>& requests,
                  const std::function<void(size_t, SampleResponse)>& done,
                  const CancelToken& cancel,
                  const std::function<SampleResponse(const SampleRequest&)>& answer);

}  // namespace evald
