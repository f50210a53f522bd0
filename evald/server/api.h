// The REST API (/v1), served through HttpServer: routes, bearer-token auth with read and submit
// scopes, JSON through protobuf's JSON mapping, errors as {"error": ..., "status": ...}.
// docs/openapi.yaml describes it; a test checks the two agree on the routes.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "evald/server/finished_run_bodies.h"
#include "evald/server/http_server.h"
#include "evald/server/run_manager.h"

namespace evald {

// token -> scopes ("read", "submit")
using TokenScopes = std::map<std::string, std::set<std::string>>;

// Reads a tokens file: one "TOKEN SCOPE[,SCOPE]" per line; '#' starts a comment.
StatusOr<TokenScopes> LoadTokens(const std::string& path);

class Api {
 public:
  Api(RunManager* runs, TokenScopes tokens);
  HttpResponse Handle(const HttpRequest& request);

  // "METHOD /path/template" of every route, for the OpenAPI consistency test.
  static std::vector<std::string> Routes();

 private:
  RunManager* runs_;
  TokenScopes tokens_;
  FinishedRunBodies finished_bodies_;
};

}  // namespace evald
