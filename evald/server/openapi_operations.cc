#include "evald/server/openapi_operations.h"

namespace evald {

namespace {

// One operation, stated a clause at a time: Op(method, path, scope, summary).Body(...)...
class Op {
 public:
  Op(std::string method, std::string path, std::string scope, std::string summary) {
    doc_.method = std::move(method);
    doc_.path = std::move(path);
    doc_.scope = std::move(scope);
    doc_.summary = std::move(summary);
  }
  Op& Body(std::string message) {
    doc_.request = std::move(message);
    return *this;
  }
  Op& Returns(std::string message, int status = 200) {
    doc_.response = std::move(message);
    doc_.status = status;
    return *this;
  }
  Op& Also(std::string content_type) {
    doc_.other_types.push_back(std::move(content_type));
    return *this;
  }
  Op& Query(std::string name, std::string type, std::string description,
            std::vector<std::string> values = {}, bool required = false) {
    doc_.query.push_back(
        {std::move(name), std::move(type), std::move(description), std::move(values), required});
    return *this;
  }
  Op& Error(int status, std::string why) {
    doc_.errors.emplace_back(status, std::move(why));
    return *this;
  }
  operator OperationDoc() const { return doc_; }  // NOLINT: the table's elements

 private:
  OperationDoc doc_;
};

const char* const kLabel = "KEY or KEY=VALUE: runs whose labels (their checkpoint's too) match";

std::vector<OperationDoc> CheckpointOperations() {
  return {
      Op("post", "/v1/checkpoints", "submit",
         "Register a checkpoint: a GGUF file, an OpenAI-compatible endpoint, recorded "
         "completions, or a name for uploaded samples; files, endpoints and secrets must be "
         "ones the operator allowed")
          .Body("evald.v1.Checkpoint")
          .Returns("evald.v1.Checkpoint", 201)
          .Error(400, "malformed, or a file, endpoint or secret the operator does not allow"),
      Op("get", "/v1/checkpoints", "read", "List checkpoints")
          .Returns("evald.v1.ListCheckpointsResponse"),
      Op("get", "/v1/checkpoints/{id}", "read", "Get a checkpoint")
          .Returns("evald.v1.Checkpoint")
          .Error(404, "unknown id"),
      Op("delete", "/v1/checkpoints/{id}", "submit",
         "Delete a checkpoint no stored run uses (and the completions uploaded with it); only "
         "the token that registered it may")
          .Returns("evald.v1.DeleteResponse")
          .Error(400, "runs still use it (named)")
          .Error(404, "unknown id"),
  };
}

std::vector<OperationDoc> RunOperations() {
  return {
      Op("post", "/v1/runs", "submit",
         "Create a run from uploaded samples, or one that samples its checkpoint; queued, "
         "sampled and graded in the background")
          .Body("evald.v1.CreateRunRequest")
          .Returns("evald.v1.Run", 201)
          .Error(400, "malformed body, unknown dataset or problem set, no usable sample")
          .Error(413, "body too large")
          .Error(429, "a quota of the token is used up (runs in flight, samples queued, bytes)"),
      Op("get", "/v1/runs", "read", "List runs (their summaries)")
          .Returns("evald.v1.ListRunsResponse")
          .Query("checkpoint", "string", "a checkpoint id")
          .Query("dataset", "string", "a dataset name")
          .Query("label", "string", kLabel),
      Op("get", "/v1/runs/{id}", "read", "A run: state, progress, summary, per-problem results")
          .Returns("evald.v1.Run")
          .Error(404, "unknown id"),
      Op("delete", "/v1/runs/{id}", "submit",
         "Delete an ended run and its samples (cached verdicts stay); only the token that "
         "created it may")
          .Returns("evald.v1.DeleteResponse")
          .Error(400, "the run is queued or running: cancel it first")
          .Error(404, "unknown id"),
      Op("get", "/v1/runs/{id}/samples", "read",
         "The run's samples with extraction and verdicts, paged in (problem, index) order")
          .Returns("evald.v1.ListSamplesResponse")
          .Query("page_size", "integer", "1..1000 (default 100)")
          .Query("page_token", "string", "next_page_token of the previous page")
          .Error(400, "a page token this API did not hand out")
          .Error(404, "unknown id"),
      Op("get", "/v1/runs/{id}/report", "read",
         "The run's results as an evald eval report (what evald compare and gate read)")
          .Returns("evald.v1.EvalReport")
          .Error(404, "unknown id"),
      Op("post", "/v1/runs/{id}/cancel", "submit",
         "Cancel a queued or running run; the reason is recorded")
          .Body("evald.v1.CancelRunRequest")
          .Returns("evald.v1.Run", 202)
          .Error(400, "the run already ended")
          .Error(404, "unknown id"),
      Op("post", "/v1/runs/{id}/resume", "submit",
         "Queue a FAILED or CANCELLED run again; what was generated and graded is kept")
          .Returns("evald.v1.Run", 202)
          .Error(400, "the run is not FAILED or CANCELLED")
          .Error(404, "unknown id"),
  };
}

std::vector<OperationDoc> ReportOperations() {
  return {
      Op("get", "/v1/compare", "read",
         "Compare two runs on their shared problems: per-problem deltas, delta pass@k with "
         "paired bootstrap intervals, exact paired tests, minimum detectable effect")
          .Returns("evald.v1.Comparison")
          .Query("a", "string", "the baseline run", {}, true)
          .Query("b", "string", "the candidate run", {}, true)
          .Query("metric", "string",
                 "strict: only passes formal proved or bounded; unverified: only passes formal "
                 "could not judge",
                 {"simulation", "strict", "unverified"})
          .Error(400, "a or b missing, an unknown metric, or runs over different problems")
          .Error(404, "unknown run"),
      Op("get", "/v1/leaderboard", "read",
         "Finished runs ranked by pass@1 within each problem set, in tiers of runs not "
         "significantly different from their tier's best")
          .Returns("evald.v1.Leaderboard")
          .Also("text/csv")
          .Also("text/markdown")
          .Also("text/html")
          .Query("format", "string", "", {"json", "csv", "markdown", "html"})
          .Query("dataset", "string", "a dataset name")
          .Query("label", "string", kLabel)
          .Error(400, "unknown format"),
      Op("post", "/v1/plan", "read",
         "How many samples per problem a difference in pass@1 needs, and the minimum "
         "detectable effect (from runs, or hypothetical)")
          .Body("evald.v1.PlanRequest")
          .Returns("evald.v1.PowerPlan")
          .Error(400, "invalid request")
          .Error(404, "unknown run"),
      Op("get", "/v1/reports/train-serve", "read",
         "Train-vs-serve report over the finished runs a filter selects: pass@k with intervals "
         "and paired deltas against the baseline, per category, against serving latency and "
         "throughput")
          .Returns("evald.v1.TrainServeReport")
          .Also("text/markdown")
          .Also("text/html")
          .Query("label", "string", kLabel)
          .Query("dataset", "string", "a dataset name")
          .Query("checkpoint", "string", "a checkpoint id")
          .Query("baseline", "string", "a run id (default: the first run)")
          .Query("format", "string", "", {"json", "markdown", "html"})
          .Error(400, "bad format or baseline")
          .Error(404, "no finished run matches"),
  };
}

std::vector<OperationDoc> ServiceOperations() {
  return {
      Op("get", "/healthz", "", "Liveness").Also("application/json"),
      Op("get", "/metrics", "read",
         "Prometheus metrics: runs, samples/s, cache hits, sandbox failures, queue depth")
          .Also("text/plain"),
      Op("get", "/openapi.json", "", "This document").Also("application/json"),
  };
}

// Served by `evald serve --model FILE.gguf`; errors are OpenAI-style ({"error": {message, type,
// code}}).
std::vector<OperationDoc> OpenAiOperations() {
  auto completion = [](std::string path, std::string summary) {
    return Op("post", std::move(path), "model", std::move(summary))
        .Body("evald.openai.CompletionRequest")
        .Returns("evald.openai.CompletionResponse")
        .Also("text/event-stream")
        .Error(400, "invalid request, or a field evald does not implement (named)")
        .Error(404, "another model name")
        .Error(503, "too many requests in progress");
  };
  return {
      Op("get", "/v1/models", "model", "(serve --model) The served model")
          .Returns("evald.openai.ModelList"),
      completion("/v1/completions",
                 "(serve --model) A completion by evald's decoding core; stream: server-sent "
                 "events ending in [DONE]"),
      completion("/v1/chat/completions",
                 "(serve --model) The same for messages, rendered in the model's chat format"),
  };
}

}  // namespace

const std::vector<OperationDoc>& OperationDocs() {
  static const std::vector<OperationDoc> all = [] {
    std::vector<OperationDoc> out;
    for (auto part : {ServiceOperations(), CheckpointOperations(), RunOperations(),
                      ReportOperations(), OpenAiOperations()})
      out.insert(out.end(), part.begin(), part.end());
    return out;
  }();
  return all;
}

}  // namespace evald
