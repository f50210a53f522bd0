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
#include "evald/eval/report_printer.h"
#include "evald/leaderboard/leaderboard.h"
#include "evald/metrics/run_comparison.h"

namespace evald {

namespace {

struct Route {
  http::verb method;
  std::string path;   // segments; "{id}" matches one segment
  std::string scope;  // "" (public), "read", "submit"
};

const std::vector<Route>& RouteTable() {
  static const std::vector<Route> routes = {
      {http::verb::get, "/healthz", ""},
      {http::verb::get, "/metrics", "read"},
      {http::verb::post, "/v1/checkpoints", "submit"},
      {http::verb::get, "/v1/checkpoints", "read"},
      {http::verb::get, "/v1/checkpoints/{id}", "read"},
      {http::verb::post, "/v1/runs", "submit"},
      {http::verb::get, "/v1/runs", "read"},
      {http::verb::get, "/v1/runs/{id}", "read"},
      {http::verb::get, "/v1/runs/{id}/samples", "read"},
      {http::verb::get, "/v1/runs/{id}/report", "read"},
      {http::verb::post, "/v1/runs/{id}/cancel", "submit"},
      {http::verb::post, "/v1/runs/{id}/resume", "submit"},
      {http::verb::get, "/v1/compare", "read"},
      {http::verb::get, "/v1/leaderboard", "read"},
  };
  return routes;
}

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
    default:
      return http::status::internal_server_error;
  }
}

// ?checkpoint=ID&dataset=NAME&label=KEY[=VALUE]
RunFilter FilterFromQuery(std::map<std::string, std::string>& query) {
  RunFilter f;
  f.checkpoint_id = query["checkpoint"];
  f.dataset = query["dataset"];
  const std::string& label = query["label"];
  size_t eq = label.find('=');
  f.label_key = label.substr(0, eq);
  if (eq != std::string::npos) f.label_value = label.substr(eq + 1);
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

StatusOr<TokenScopes> LoadTokens(const std::string& path) {
  auto text = ReadFileBounded(path, 1 << 20);
  if (!text.ok()) return text.status();
  TokenScopes out;
  int line_no = 0;
  for (auto raw : py::SplitFileLines(*text)) {
    ++line_no;
    std::string line(py::Strip(raw.substr(0, raw.find('#'))));
    if (line.empty()) continue;
    std::istringstream ss(line);
    std::string token, scopes;
    ss >> token >> scopes;
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

Api::Api(RunManager* runs, TokenScopes tokens) : runs_(runs), tokens_(std::move(tokens)) {}

std::vector<std::string> Api::Routes() {
  std::vector<std::string> out;
  for (const auto& r : RouteTable())
    out.push_back(std::string(http::to_string(r.method)) + " " + r.path);
  return out;
}

HttpResponse Api::Handle(const HttpRequest& req) {
  auto url =
      boost::urls::parse_origin_form(std::string_view(req.target().data(), req.target().size()));
  if (!url) return Error(req, http::status::bad_request, "malformed request target");
  std::string path(url->path());
  std::map<std::string, std::string> query;
  for (auto param : url->params()) query[std::string(param.key)] = std::string(param.value);
  auto segs = Split(path);

  const Route* route = nullptr;
  bool path_known = false;
  std::string id;
  for (const auto& r : RouteTable()) {
    std::string got;
    if (!Match(r.path, segs, &got)) continue;
    path_known = true;
    if (r.method == req.method()) {
      route = &r;
      id = got;
      break;
    }
  }
  if (!route) {
    return path_known
               ? Error(req, http::status::method_not_allowed, "method not allowed on " + path)
               : Error(req, http::status::not_found, "no such endpoint: " + path);
  }
  if (!route->scope.empty()) {
    auto auth = req[http::field::authorization];
    std::string_view a(auth.data(), auth.size());
    if (a.substr(0, 7) != "Bearer ")
      return Error(req, http::status::unauthorized, "missing bearer token");
    auto it = tokens_.find(std::string(a.substr(7)));
    if (it == tokens_.end()) return Error(req, http::status::unauthorized, "unknown token");
    if (!it->second.count(route->scope))
      return Error(req, http::status::forbidden, "token lacks the '" + route->scope + "' scope");
  }

  auto ok = [&](const google::protobuf::Message& m, http::status s = http::status::ok) {
    return JsonResponse(req, s, CompactJson(m));
  };
  auto fail = [&](const Status& st) { return Error(req, StatusFor(st), st.message()); };
  const std::string& p = route->path;

  if (p == "/healthz") return JsonResponse(req, http::status::ok, "{\"status\":\"ok\"}");
  if (p == "/metrics") {
    const auto& c = runs_->counters();
    double secs = c.grading_micros / 1e6;
    std::string body = fmt::format(
        "# HELP evald_runs_total Runs by final state.\n# TYPE evald_runs_total counter\n"
        "evald_runs_total{{state=\"created\"}} {}\nevald_runs_total{{state=\"succeeded\"}} {}\n"
        "evald_runs_total{{state=\"failed\"}} {}\nevald_runs_total{{state=\"cancelled\"}} {}\n"
        "# HELP evald_samples_graded_total Samples graded.\n# TYPE evald_samples_graded_total "
        "counter\n"
        "evald_samples_graded_total {}\n"
        "# HELP evald_simulations_total Simulations run.\n# TYPE evald_simulations_total counter\n"
        "evald_simulations_total {}\n"
        "# HELP evald_cache_hits_total Verdicts answered by the cache.\n# TYPE "
        "evald_cache_hits_total counter\n"
        "evald_cache_hits_total {}\n"
        "# HELP evald_sandbox_failures_total Jobs the sandbox could not run.\n"
        "# TYPE evald_sandbox_failures_total counter\nevald_sandbox_failures_total {}\n"
        "# HELP evald_simulation_seconds_total Time spent simulating.\n"
        "# TYPE evald_simulation_seconds_total counter\nevald_simulation_seconds_total {:.3f}\n"
        "# HELP evald_samples_per_second Samples graded per simulation-second.\n"
        "# TYPE evald_samples_per_second gauge\nevald_samples_per_second {:.3f}\n"
        "# HELP evald_queue_depth Runs queued or running.\n# TYPE evald_queue_depth gauge\n"
        "evald_queue_depth {}\n"
        "# HELP evald_generation_requests_total Backend requests answered (after retries).\n"
        "# TYPE evald_generation_requests_total counter\nevald_generation_requests_total {}\n"
        "# HELP evald_generation_failures_total Backend requests that failed after retries.\n"
        "# TYPE evald_generation_failures_total counter\nevald_generation_failures_total {}\n"
        "# HELP evald_generation_retries_total Backend request attempts beyond the first.\n"
        "# TYPE evald_generation_retries_total counter\nevald_generation_retries_total {}\n"
        "# HELP evald_samples_generated_total Completions drawn from backends.\n"
        "# TYPE evald_samples_generated_total counter\nevald_samples_generated_total {}\n"
        "# HELP evald_generation_cache_hits_total Completions taken from stored generations.\n"
        "# TYPE evald_generation_cache_hits_total counter\nevald_generation_cache_hits_total {}\n"
        "# HELP evald_generated_tokens_total Completion tokens reported by backends.\n"
        "# TYPE evald_generated_tokens_total counter\nevald_generated_tokens_total {}\n",
        c.runs_created.load(), c.runs_succeeded.load(), c.runs_failed.load(),
        c.runs_cancelled.load(), c.samples_graded.load(), c.simulations.load(), c.cache_hits.load(),
        c.sandbox_failures.load(), secs, secs > 0 ? c.simulations / secs : 0.0, runs_->QueueDepth(),
        c.generation_requests.load(), c.generation_failures.load(), c.generation_retries.load(),
        c.samples_generated.load(), c.generation_cache_hits.load(), c.generated_tokens.load());
    HttpResponse res{http::status::ok, req.version()};
    res.set(http::field::content_type, "text/plain; version=0.0.4");
    res.body() = std::move(body);
    return res;
  }
  if (p == "/v1/checkpoints" && req.method() == http::verb::post) {
    v1::Checkpoint ck;
    if (Status st = ParseBody(req, &ck); !st.ok()) return fail(st);
    if (Status st = runs_->PutCheckpoint(&ck); !st.ok()) return fail(st);
    return ok(ck, http::status::created);
  }
  if (p == "/v1/checkpoints") {
    v1::ListCheckpointsResponse out;
    auto cks = runs_->ListCheckpoints();
    if (!cks.ok()) return fail(cks.status());
    for (auto& ck : *cks) *out.add_checkpoints() = std::move(ck);
    return ok(out);
  }
  if (p == "/v1/checkpoints/{id}") {
    auto ck = runs_->GetCheckpoint(id);
    return ck.ok() ? ok(*ck) : fail(ck.status());
  }
  if (p == "/v1/runs" && req.method() == http::verb::post) {
    v1::CreateRunRequest body;
    if (Status st = ParseBody(req, &body); !st.ok()) return fail(st);
    auto run = runs_->CreateRun(body.spec(), body.samples_jsonl());
    return run.ok() ? ok(*run, http::status::created) : fail(run.status());
  }
  if (p == "/v1/runs") {
    RunFilter f = FilterFromQuery(query);
    v1::ListRunsResponse out;
    auto listed = runs_->ListRuns(f);
    if (!listed.ok()) return fail(listed.status());
    for (auto& r : *listed) *out.add_runs() = std::move(r);
    return ok(out);
  }
  if (p == "/v1/runs/{id}") {
    auto record = runs_->GetRunBytes(id);
    if (!record.ok()) return fail(record.status());
    if (auto body = finished_bodies_.Find(id, *record))
      return JsonResponse(req, http::status::ok, std::move(*body));
    v1::Run run;
    if (!run.ParseFromString(*record)) return fail(Status::Corruption("stored run does not parse"));
    std::string body = CompactJson(run);
    if (run.state() == v1::SUCCEEDED || run.state() == v1::FAILED || run.state() == v1::CANCELLED)
      finished_bodies_.Keep(id, std::move(*record), body);
    return JsonResponse(req, http::status::ok, std::move(body));
  }
  if (p == "/v1/runs/{id}/samples") {
    auto run = runs_->GetRun(id);
    if (!run.ok()) return fail(run.status());
    int size = 100;
    if (query.count("page_size")) {
      size = static_cast<int>(ParseInt(query["page_size"], 1, 1000).value_or(-1));
      if (size < 1 || size > 1000)
        return fail(Status::InvalidArgument("page_size must be 1..1000"));
    }
    v1::ListSamplesResponse out;
    std::string next;
    auto samples = runs_->ListSamples(id, query["page_token"], size, &next);
    if (!samples.ok()) return fail(samples.status());
    for (auto& s : *samples) *out.add_samples() = std::move(s);
    out.set_next_page_token(next);
    return ok(out);
  }
  if (p == "/v1/runs/{id}/report") {
    auto report = runs_->Report(id);
    return report.ok() ? ok(*report) : fail(report.status());
  }
  if (p == "/v1/runs/{id}/cancel") {
    v1::CancelRunRequest body;
    if (Status st = ParseBody(req, &body); !st.ok()) return fail(st);
    if (Status st = runs_->Cancel(id, body.reason()); !st.ok()) return fail(st);
    auto run = runs_->GetRun(id);
    return run.ok() ? ok(*run, http::status::accepted) : fail(run.status());
  }
  if (p == "/v1/runs/{id}/resume") {
    if (Status st = runs_->Resume(id); !st.ok()) return fail(st);
    auto run = runs_->GetRun(id);
    return run.ok() ? ok(*run, http::status::accepted) : fail(run.status());
  }
  if (p == "/v1/compare") {
    if (query["a"].empty() || query["b"].empty())
      return fail(Status::InvalidArgument("give two runs: /v1/compare?a=RUN&b=RUN"));
    auto a = runs_->Report(query["a"]);
    if (!a.ok()) return fail(a.status());
    auto b = runs_->Report(query["b"]);
    if (!b.ok()) return fail(b.status());
    CompareOptions opts;
    opts.label_a = query["a"];
    opts.label_b = query["b"];
    opts.ks.clear();
    for (int k : a->k()) opts.ks.push_back(k);
    if (opts.ks.empty()) opts.ks = {1};
    return ok(CompareReports(*a, *b, opts));
  }
  if (p == "/v1/leaderboard") {
    std::string format = query.count("format") ? query["format"] : "json";
    RunFilter f = FilterFromQuery(query);
    std::map<std::string, v1::Checkpoint> cks;
    auto listed_cks = runs_->ListCheckpoints();
    auto listed_runs = runs_->ListRuns(f);
    if (!listed_cks.ok()) return fail(listed_cks.status());
    if (!listed_runs.ok()) return fail(listed_runs.status());
    for (auto& ck : *listed_cks) cks[ck.id()] = ck;
    auto rendered = RenderLeaderboard(BuildLeaderboard(*listed_runs, cks), format);
    if (!rendered.ok()) return fail(rendered.status());
    HttpResponse res{http::status::ok, req.version()};
    res.set(http::field::content_type, LeaderboardContentType(format));
    res.body() = std::move(*rendered);
    return res;
  }
  return Error(req, http::status::not_found, "no such endpoint: " + path);
}

}  // namespace evald
