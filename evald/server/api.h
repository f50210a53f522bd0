// The REST API (/v1), served through HttpServer: routes, bearer-token auth with read and submit
// scopes, JSON through protobuf's JSON mapping, errors as {"error": ..., "status": ...}.
// The OpenAPI document (openapi.h, served at /openapi.json) describes it; a test checks the two
// agree on the routes.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "evald/leaderboard/tiers.h"
#include "evald/server/finished_run_bodies.h"
#include "evald/server/http_server.h"
#include "evald/server/run_queue.h"
#include "evald/server/run_records.h"
#include "evald/server/run_requests.h"

namespace evald {

// token -> scopes ("read", "submit")
using TokenScopes = std::map<std::string, std::set<std::string>>;
// token -> its quotas where the tokens file sets any
using TokenQuotas = std::map<std::string, Quotas>;

// Reads a tokens file: one "TOKEN SCOPE[,SCOPE] [runs=N] [samples=N] [bytes=N]" per line ('#'
// starts a comment); a token's unset quotas are `defaults`.
StatusOr<TokenScopes> LoadTokens(const std::string& path, const Quotas& defaults = {},
                                 TokenQuotas* quotas = nullptr);

// What the routes act on: reads go to the records, a new checkpoint or run to the requests, and
// a created run, a cancel or a resume to the queue.
struct ApiServices {
  RunRecords* records = nullptr;
  RunRequests* requests = nullptr;
  RunQueue* queue = nullptr;
  DatasetRegistry* datasets = nullptr;  // problem categories for the train-serve report
};

class Api {
 public:
  // Submitters are held to their quotas (`quotas`, else `default_quotas`).
  Api(ApiServices services, TokenScopes tokens, TokenQuotas quotas = {},
      Quotas default_quotas = {});
  HttpResponse Handle(const HttpRequest& request);

  // "METHOD /path/template" of every route, for the OpenAPI consistency test.
  static std::vector<std::string> Routes();

 private:
  // One request matched to its route.
  struct Call {
    const HttpRequest& req;
    std::string id;  // the {id} segment, where the route has one
    std::map<std::string, std::string> query;
  };
  using Handler = HttpResponse (Api::*)(Call&);
  struct Route {
    http::verb method;
    std::string path;   // segments; "{id}" matches one segment
    std::string scope;  // "" (public), "read", "submit"
    Handler handler;
  };
  static const std::vector<Route>& RouteTable();
  // Empty when the request carries a token with the route's scope; else the error response.
  std::optional<HttpResponse> Authorize(const HttpRequest& req, const Route& route) const;

  HttpResponse Healthz(Call& c);
  HttpResponse OpenApi(Call& c);
  HttpResponse Metrics(Call& c);
  HttpResponse CreateCheckpoint(Call& c);
  HttpResponse ListCheckpoints(Call& c);
  HttpResponse GetCheckpoint(Call& c);
  HttpResponse DeleteCheckpoint(Call& c);
  HttpResponse CreateRun(Call& c);
  HttpResponse ListRuns(Call& c);
  HttpResponse GetRun(Call& c);
  HttpResponse ListSamples(Call& c);
  HttpResponse GetReport(Call& c);
  HttpResponse CancelRun(Call& c);
  HttpResponse ResumeRun(Call& c);
  HttpResponse DeleteRun(Call& c);
  // 403 unless the caller is who created a record (`owner`, a submitter id; empty: anyone).
  std::optional<HttpResponse> RefuseUnlessOwner(const HttpRequest& req, const std::string& owner,
                                                const std::string& what) const;
  HttpResponse Compare(Call& c);
  HttpResponse Leaderboard(Call& c);
  HttpResponse Plan(Call& c);
  HttpResponse TrainServe(Call& c);

  // The submitter of a request that passed Authorize.
  Submitter SubmitterOf(const HttpRequest& req) const;

  RunRecords& records_;
  RunRequests& requests_;
  RunQueue& queue_;
  DatasetRegistry& datasets_;
  TokenScopes tokens_;
  TokenQuotas quotas_;
  Quotas default_quotas_;
  FinishedRunBodies finished_bodies_;
  PairwiseCache pair_cache_;  // leaderboard tiers: each pair of finished runs tested once
};

}  // namespace evald
