#include "evald/server/api.h"

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <chrono>
#include <sstream>

#include "base/file_io.h"
#include "base/numbers.h"
#include "base/py_text.h"
#include "evald/leaderboard/leaderboard.h"
#include "evald/metrics/power_plan.h"
#include "evald/metrics/run_comparison.h"
#include "evald/proto/api.pb.h"
#include "evald/proto/json.h"
#include "evald/report/train_serve.h"
#include "evald/runs/scoring.h"
#include "evald/server/openapi.h"
#include "evald/server/prometheus_text.h"
#include "evald/server/train_serve_runs.h"

namespace evald {

namespace {

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> out;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    out.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Matches `path` against a route template; fills {id}.
bool Match(const std::string& tmpl, const std::vector<std::string>& segs, std::string* id) {
  auto t = Split(tmpl);
  if (t.size() != segs.size()) return false;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == "{id}") {
      if (segs[i].empty()) return false;
      *id = segs[i];
    } else if (t[i] != segs[i]) {
      return false;
    }
  }
  return true;
}

std::string CompactJson(const google::protobuf::Message& m) {
  return ToJson(m, /*pretty=*/false);
}

HttpResponse Error(const HttpRequest& req, http::status status, const std::string& message) {
  auto res = JsonResponse(req, status, JsonError(status, message));
  if (status == http::status::unauthorized) res.set(http::field::www_authenticate, "Bearer");
  return res;
}

http::status StatusFor(const Status& st) {
  switch (st.code()) {
    case Status::Code::kNotFound:
      return http::status::not_found;
    case Status::Code::kInvalidArgument:
      return http::status::bad_request;
    case Status::Code::kCorruption:
      return http::status::bad_request;
    case Status::Code::kUnavailable:
    case Status::Code::kIoError:  // the store cannot be written (or read) right now
      return http::status::service_unavailable;
    case Status::Code::kNoSpace:
      return http::status::insufficient_storage;
    case Status::Code::kResourceExhausted:
      return http::status::too_many_requests;
    default:
      return http::status::internal_server_error;
  }
}

// ?checkpoint=ID&dataset=NAME&label=KEY[=VALUE]
RunFilter FilterFromQuery(std::map<std::string, std::string>& query) {
  RunFilter f;
  f.checkpoint_id = query["checkpoint"];
  f.dataset = query["dataset"];
  f.SetLabel(query["label"]);
  return f;
}

Status ParseBody(const HttpRequest& req, google::protobuf::Message* msg) {
  if (req.body().empty()) return Status::Ok();
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = false;  // a misspelt field is an error, not a silent default
  auto st = google::protobuf::util::JsonStringToMessage(req.body(), msg, opts);
  if (!st.ok()) {
    std::string why(st.message());
    for (char& c : why)
      if (c == '\n') c = ' ';
    return Status::InvalidArgument("malformed JSON body: " + why);
  }
  return Status::Ok();
}

}  // namespace

namespace {

// "runs=N", "samples=N", "bytes=N" after a token's scopes.
Status ParseQuota(const std::string& item, Quotas* q) {
  const size_t eq = item.find('=');
  const std::string key = item.substr(0, eq);
  auto value = eq == std::string::npos
                   ? std::nullopt
                   : ParseInt(std::string_view(item).substr(eq + 1), 0, int64_t{1} << 50);
  if (!value)
    return Status::InvalidArgument("expected runs=N, samples=N or bytes=N, not '" + item + "'");
  if (key == "runs")
    q->runs_in_flight = static_cast<int>(std::min<int64_t>(*value, 1 << 30));
  else if (key == "samples")
    q->queued_samples = *value;
  else if (key == "bytes")
    q->stored_bytes = *value;
  else
    return Status::InvalidArgument("unknown quota '" + key + "'");
  return Status::Ok();
}

}  // namespace

StatusOr<TokenScopes> LoadTokens(const std::string& path, const Quotas& defaults,
                                 TokenQuotas* quotas) {
  auto text = ReadFileBounded(path, 1 << 20);
  if (!text.ok()) return text.status();
  TokenScopes out;
  int line_no = 0;
  for (auto raw : py::SplitFileLines(*text)) {
    ++line_no;
    std::string line(py::Strip(raw.substr(0, raw.find('#'))));
    if (line.empty()) continue;
    std::istringstream ss(line);
    std::string token, scopes, item;
    ss >> token >> scopes;
    Quotas q = defaults;
    bool any_quota = false;
    while (ss >> item) {
      if (Status st = ParseQuota(item, &q); !st.ok())
        return st.Annotate(fmt::format("{} line {}", path, line_no));
      any_quota = true;
    }
    if (any_quota && quotas) (*quotas)[token] = q;
    if (token.size() < 16)
      return Status::InvalidArgument(
          fmt::format("{} line {}: tokens must be at least 16 characters", path, line_no));
    if (scopes.empty()) scopes = "read";
    std::stringstream s2(scopes);
    std::string scope;
    while (std::getline(s2, scope, ',')) {
      if (scope != "read" && scope != "submit")
        return Status::InvalidArgument(
            fmt::format("{} line {}: unknown scope '{}'", path, line_no, scope));
      out[token].insert(scope);
    }
    if (out[token].count("submit")) out[token].insert("read");
  }
  if (out.empty()) return Status::InvalidArgument(path + " holds no token");
  return out;
}

Api::Api(ApiServices services, TokenScopes tokens, TokenQuotas quotas, Quotas default_quotas)
    : records_(*services.records),
      requests_(*services.requests),
      queue_(*services.queue),
      datasets_(*services.datasets),
      tokens_(std::move(tokens)),
      quotas_(std::move(quotas)),
      default_quotas_(default_quotas) {}

Submitter Api::SubmitterOf(const HttpRequest& req) const {
  auto auth = req[http::field::authorization];
  const std::string token = std::string(auth.data(), auth.size()).substr(7);  // "Bearer "
  auto q = quotas_.find(token);
  return {SubmitterId(token), q != quotas_.end() ? q->second : default_quotas_};
}

const std::vector<Api::Route>& Api::RouteTable() {
  using V = http::verb;
  static const std::vector<Route> routes = {
      {V::get, "/healthz", "", &Api::Healthz},
      {V::get, "/openapi.json", "", &Api::OpenApi},
      {V::get, "/metrics", "read", &Api::Metrics},
      {V::post, "/v1/checkpoints", "submit", &Api::CreateCheckpoint},
      {V::get, "/v1/checkpoints", "read", &Api::ListCheckpoints},
      {V::get, "/v1/checkpoints/{id}", "read", &Api::GetCheckpoint},
      {V::delete_, "/v1/checkpoints/{id}", "submit", &Api::DeleteCheckpoint},
      {V::post, "/v1/runs", "submit", &Api::CreateRun},
      {V::get, "/v1/runs", "read", &Api::ListRuns},
      {V::get, "/v1/runs/{id}", "read", &Api::GetRun},
      {V::delete_, "/v1/runs/{id}", "submit", &Api::DeleteRun},
      {V::get, "/v1/runs/{id}/samples", "read", &Api::ListSamples},
      {V::get, "/v1/runs/{id}/report", "read", &Api::GetReport},
      {V::post, "/v1/runs/{id}/cancel", "submit", &Api::CancelRun},
      {V::post, "/v1/runs/{id}/resume", "submit", &Api::ResumeRun},
      {V::get, "/v1/compare", "read", &Api::Compare},
      {V::get, "/v1/leaderboard", "read", &Api::Leaderboard},
      {V::post, "/v1/plan", "read", &Api::Plan},
      {V::get, "/v1/reports/train-serve", "read", &Api::TrainServe},
  };
  return routes;
}

std::vector<std::string> Api::Routes() {
  std::vector<std::string> out;
  for (const auto& r : RouteTable())
    out.push_back(std::string(http::to_string(r.method)) + " " + r.path);
  return out;
}

std::optional<HttpResponse> Api::Authorize(const HttpRequest& req, const Route& route) const {
  if (route.scope.empty()) return std::nullopt;
  auto auth = req[http::field::authorization];
  std::string_view a(auth.data(), auth.size());
  if (a.substr(0, 7) != "Bearer ")
    return Error(req, http::status::unauthorized, "missing bearer token");
  auto it = tokens_.find(std::string(a.substr(7)));
  if (it == tokens_.end()) return Error(req, http::status::unauthorized, "unknown token");
  if (!it->second.count(route.scope))
    return Error(req, http::status::forbidden, "token lacks the '" + route.scope + "' scope");
  return std::nullopt;
}

HttpResponse Api::Handle(const HttpRequest& req) {
  auto url =
      boost::urls::parse_origin_form(std::string_view(req.target().data(), req.target().size()));
  if (!url) return Error(req, http::status::bad_request, "malformed request target");
  std::string path(url->path());
  Call call{req, "", {}};
  for (auto param : url->params()) call.query[std::string(param.key)] = std::string(param.value);
  auto segs = Split(path);
  bool path_known = false;
  for (const auto& r : RouteTable()) {
    std::string id;
    if (!Match(r.path, segs, &id)) continue;
    path_known = true;
    if (r.method != req.method()) continue;
    if (auto denied = Authorize(req, r)) return std::move(*denied);
    call.id = std::move(id);
    return (this->*r.handler)(call);
  }
  return path_known ? Error(req, http::status::method_not_allowed, "method not allowed on " + path)
                    : Error(req, http::status::not_found, "no such endpoint: " + path);
}

namespace {

HttpResponse Ok(const HttpRequest& req, const google::protobuf::Message& m,
                http::status s = http::status::ok) {
  return JsonResponse(req, s, CompactJson(m));
}

HttpResponse Fail(const HttpRequest& req, const Status& st) {
  return Error(req, StatusFor(st), st.message());
}

template <typename T>
HttpResponse OkOrFail(const HttpRequest& req, const StatusOr<T>& v,
                      http::status s = http::status::ok) {
  return v.ok() ? Ok(req, *v, s) : Fail(req, v.status());
}

}  // namespace

// Public, as the API's shape is no secret: clients are generated from it before they hold a
// token.
HttpResponse Api::OpenApi(Call& c) {
  static const StatusOr<std::string> document = OpenApiDocument();
  if (!document.ok()) return Fail(c.req, document.status());
  return JsonResponse(c.req, http::status::ok, *document);
}

HttpResponse Api::Healthz(Call& c) {
  return JsonResponse(c.req, http::status::ok, "{\"status\":\"ok\"}");
}

HttpResponse Api::Metrics(Call& c) {
  const RunCounters& n = queue_.counters();
  const SamplingCounters& g = n.sampling;
  const double secs = n.grading_micros / 1e6;
  PrometheusText m;
  m.Family("evald_runs_total", "counter", "Runs by final state.",
           {{{{"state", "created"}}, static_cast<double>(n.runs_created.load())},
            {{{"state", "succeeded"}}, static_cast<double>(n.runs_succeeded.load())},
            {{{"state", "failed"}}, static_cast<double>(n.runs_failed.load())},
            {{{"state", "cancelled"}}, static_cast<double>(n.runs_cancelled.load())}});
  m.Counter("evald_samples_graded_total", "Samples graded.", n.samples_graded.load());
  m.Counter("evald_simulations_total", "Simulations run.", n.simulations.load());
  m.Counter("evald_cache_hits_total", "Verdicts answered by the cache.", n.cache_hits.load());
  m.Counter("evald_sandbox_failures_total", "Jobs the sandbox could not run.",
            n.sandbox_failures.load());
  m.Counter("evald_simulation_seconds_total", "Time spent simulating.", secs);
  m.Gauge("evald_samples_per_second", "Samples graded per simulation-second.",
          secs > 0 ? n.simulations / secs : 0.0);
  m.Gauge("evald_queue_depth", "Runs queued or running.", queue_.QueueDepth());
  m.Counter("evald_generation_requests_total", "Backend requests answered (after retries).",
            g.requests.load());
  m.Counter("evald_generation_failures_total", "Backend requests that failed after retries.",
            g.failures.load());
  m.Counter("evald_generation_retries_total", "Backend request attempts beyond the first.",
            g.retries.load());
  m.Counter("evald_samples_generated_total", "Completions drawn from backends.",
            g.samples_generated.load());
  m.Counter("evald_generation_cache_hits_total", "Completions taken from stored generations.",
            g.cache_hits.load());
  m.Counter("evald_generated_tokens_total", "Completion tokens reported by backends.",
            g.generated_tokens.load());
  HttpResponse res{http::status::ok, c.req.version()};
  res.set(http::field::content_type, PrometheusText::kContentType);
  res.body() = m.text();
  return res;
}

HttpResponse Api::CreateCheckpoint(Call& c) {
  v1::Checkpoint ck;
  if (Status st = ParseBody(c.req, &ck); !st.ok()) return Fail(c.req, st);
  ck.set_submitter(SubmitterOf(c.req).id);  // whatever the body said
  if (Status st = requests_.PutCheckpoint(&ck); !st.ok()) return Fail(c.req, st);
  return Ok(c.req, ck, http::status::created);
}

HttpResponse Api::ListCheckpoints(Call& c) {
  auto cks = records_.ListCheckpoints();
  if (!cks.ok()) return Fail(c.req, cks.status());
  v1::ListCheckpointsResponse out;
  for (auto& ck : *cks) *out.add_checkpoints() = std::move(ck);
  return Ok(c.req, out);
}

HttpResponse Api::GetCheckpoint(Call& c) {
  return OkOrFail(c.req, records_.GetCheckpoint(c.id));
}

HttpResponse Api::CreateRun(Call& c) {
  v1::CreateRunRequest body;
  if (Status st = ParseBody(c.req, &body); !st.ok()) return Fail(c.req, st);
  const Submitter who = SubmitterOf(c.req);
  auto run = requests_.CreateRun(body.spec(), body.samples_jsonl(), &who);
  if (run.ok()) queue_.Enqueue(run->id());
  return OkOrFail(c.req, run, http::status::created);
}

HttpResponse Api::ListRuns(Call& c) {
  auto listed = records_.ListRuns(FilterFromQuery(c.query));
  if (!listed.ok()) return Fail(c.req, listed.status());
  v1::ListRunsResponse out;
  for (auto& r : *listed) *out.add_runs() = std::move(r);
  return Ok(c.req, out);
}

// A finished run's JSON is kept and served again while its stored bytes are unchanged.
HttpResponse Api::GetRun(Call& c) {
  auto record = records_.GetRunBytes(c.id);
  if (!record.ok()) return Fail(c.req, record.status());
  if (auto body = finished_bodies_.Find(c.id, *record))
    return JsonResponse(c.req, http::status::ok, std::move(*body));
  v1::Run run;
  if (!run.ParseFromString(*record))
    return Fail(c.req, Status::Corruption("stored run does not parse"));
  std::string body = CompactJson(run);
  if (run.state() == v1::SUCCEEDED || run.state() == v1::FAILED || run.state() == v1::CANCELLED)
    finished_bodies_.Keep(c.id, std::move(*record), body);
  return JsonResponse(c.req, http::status::ok, std::move(body));
}

HttpResponse Api::ListSamples(Call& c) {
  auto run = records_.GetRun(c.id);
  if (!run.ok()) return Fail(c.req, run.status());
  int size = 100;
  if (c.query.count("page_size")) {
    size = static_cast<int>(ParseInt(c.query["page_size"], 1, 1000).value_or(-1));
    if (size < 1 || size > 1000)
      return Fail(c.req, Status::InvalidArgument("page_size must be 1..1000"));
  }
  v1::ListSamplesResponse out;
  std::string next;
  auto samples = records_.ListSamples(c.id, c.query["page_token"], size, &next);
  if (!samples.ok()) return Fail(c.req, samples.status());
  for (auto& s : *samples) *out.add_samples() = std::move(s);
  out.set_next_page_token(next);
  return Ok(c.req, out);
}

HttpResponse Api::GetReport(Call& c) {
  return OkOrFail(c.req, records_.Report(c.id));
}

HttpResponse Api::CancelRun(Call& c) {
  v1::CancelRunRequest body;
  if (Status st = ParseBody(c.req, &body); !st.ok()) return Fail(c.req, st);
  if (Status st = queue_.Cancel(c.id, body.reason()); !st.ok()) return Fail(c.req, st);
  return OkOrFail(c.req, records_.GetRun(c.id), http::status::accepted);
}

std::optional<HttpResponse> Api::RefuseUnlessOwner(const HttpRequest& req, const std::string& owner,
                                                   const std::string& what) const {
  if (owner.empty() || owner == SubmitterOf(req).id) return std::nullopt;
  return Error(req, http::status::forbidden,
               what + " was created with another token; only that token may delete it");
}

// The run and its samples go; the verdicts its grading cached stay (a later run of the same
// code is still a lookup). A run still queued or running is refused: cancel it first.
HttpResponse Api::DeleteRun(Call& c) {
  auto run = records_.GetRun(c.id);
  if (!run.ok()) return Fail(c.req, run.status());
  if (auto refused = RefuseUnlessOwner(c.req, run->submitter(), "run " + c.id)) return *refused;
  auto samples = queue_.Delete(c.id);
  if (!samples.ok()) return Fail(c.req, samples.status());
  v1::DeleteResponse out;
  out.set_deleted(c.id);
  out.set_samples_deleted(*samples);
  return Ok(c.req, out);
}

// Refused while a run still refers to the checkpoint (delete those runs first).
HttpResponse Api::DeleteCheckpoint(Call& c) {
  auto ck = records_.GetCheckpoint(c.id);
  if (!ck.ok()) return Fail(c.req, ck.status());
  if (auto refused = RefuseUnlessOwner(c.req, ck->submitter(), "checkpoint " + c.id))
    return *refused;
  if (Status st = requests_.DeleteCheckpoint(c.id); !st.ok()) return Fail(c.req, st);
  v1::DeleteResponse out;
  out.set_deleted(c.id);
  return Ok(c.req, out);
}

HttpResponse Api::ResumeRun(Call& c) {
  if (Status st = queue_.Resume(c.id); !st.ok()) return Fail(c.req, st);
  return OkOrFail(c.req, records_.GetRun(c.id), http::status::accepted);
}

HttpResponse Api::Compare(Call& c) {
  if (c.query["a"].empty() || c.query["b"].empty())
    return Fail(c.req, Status::InvalidArgument("give two runs: /v1/compare?a=RUN&b=RUN"));
  // ?metric=strict: only passes formal proved or bounded count; unverified: only those formal
  // could not judge (docs/verdicts.md).
  const std::string metric = c.query["metric"].empty() ? "simulation" : c.query["metric"];
  auto a = records_.Report(c.query["a"]);
  if (!a.ok()) return Fail(c.req, a.status());
  auto b = records_.Report(c.query["b"]);
  if (!b.ok()) return Fail(c.req, b.status());
  a = ReportForMetric(std::move(*a), metric);
  if (!a.ok()) return Fail(c.req, a.status());
  b = ReportForMetric(std::move(*b), metric);
  if (!b.ok()) return Fail(c.req, b.status());
  if (Status same = SameProblemSet(*a, *b); !same.ok()) return Fail(c.req, same);
  CompareOptions opts;
  opts.label_a = c.query["a"];
  opts.label_b = c.query["b"];
  opts.ks.assign(a->k().begin(), a->k().end());
  if (opts.ks.empty()) opts.ks = {1};
  v1::Comparison comparison = CompareReports(*a, *b, opts);
  comparison.set_metric(metric);
  return Ok(c.req, comparison);
}

// A power plan: from finished runs' reports, or hypothetical. Read scope: it stores nothing.
HttpResponse Api::Plan(Call& c) {
  v1::PlanRequest body;
  if (Status st = ParseBody(c.req, &body); !st.ok()) return Fail(c.req, st);
  PlanInputs in;
  v1::EvalReport a, b;
  if (!body.run_a().empty()) {
    auto r = records_.Report(body.run_a());
    if (!r.ok()) return Fail(c.req, r.status());
    a = std::move(*r);
    in.a = &a;
  }
  if (!body.run_b().empty()) {
    if (!in.a) return Fail(c.req, Status::InvalidArgument("run_b needs run_a"));
    auto r = records_.Report(body.run_b());
    if (!r.ok()) return Fail(c.req, r.status());
    b = std::move(*r);
    in.b = &b;
  }
  in.pass_at_1 = body.pass_at_1() > 0 ? body.pass_at_1() : -1;
  in.problems = body.problems();
  in.delta = body.delta();
  if (body.alpha() > 0) in.alpha = body.alpha();
  if (body.power() > 0) in.power = body.power();
  if (body.has_tau()) in.tau = body.tau();
  in.n = body.n();
  // Simulations cost CPU on the daemon (problems x simulations binomial draws per check): at
  // most a million draws per check here, whatever the request asks.
  const int problems = std::max(2, in.a ? in.a->problems_size() : body.problems());
  in.simulations =
      std::min(body.simulations() > 0 ? body.simulations() : 2000, std::max(0, 1000000 / problems));
  return OkOrFail(c.req, MakePowerPlan(in));
}

// ?label=KEY=VALUE (the runs of one checkpoint)&baseline=RUN&format=html|markdown|json
HttpResponse Api::TrainServe(Call& c) {
  const std::string format = c.query.count("format") ? c.query["format"] : "json";
  if (format != "json" && format != "html" && format != "markdown" && format != "md")
    return Fail(c.req, Status::InvalidArgument("format must be json, markdown or html"));
  RunFilter filter = FilterFromQuery(c.query);
  const std::string title =
      "train vs serve" + (c.query["label"].empty() ? "" : ": " + c.query["label"]);
  auto report = TrainServeFromStore(records_, datasets_, filter, c.query["baseline"], title);
  if (!report.ok()) return Fail(c.req, report.status());
  auto rendered = RenderTrainServeReport(*report, format);
  if (!rendered.ok()) return Fail(c.req, rendered.status());
  HttpResponse res{http::status::ok, c.req.version()};
  res.set(http::field::content_type, format == "html"   ? "text/html; charset=utf-8"
                                     : format == "json" ? "application/json"
                                                        : "text/markdown; charset=utf-8");
  res.body() = std::move(*rendered);
  return res;
}

HttpResponse Api::Leaderboard(Call& c) {
  const std::string format = c.query.count("format") ? c.query["format"] : "json";
  auto listed_cks = records_.ListCheckpoints();
  RunFilter filter = FilterFromQuery(c.query);
  filter.with_problems = true;
  auto listed_runs = records_.ListRuns(filter);
  if (!listed_cks.ok()) return Fail(c.req, listed_cks.status());
  if (!listed_runs.ok()) return Fail(c.req, listed_runs.status());
  std::map<std::string, v1::Checkpoint> cks;
  for (auto& ck : *listed_cks) cks[ck.id()] = ck;
  auto rendered =
      RenderLeaderboard(BuildLeaderboard(*listed_runs, cks, 1, 0.05, &pair_cache_), format);
  if (!rendered.ok()) return Fail(c.req, rendered.status());
  HttpResponse res{http::status::ok, c.req.version()};
  res.set(http::field::content_type, LeaderboardContentType(format));
  res.body() = std::move(*rendered);
  return res;
}

}  // namespace evald
