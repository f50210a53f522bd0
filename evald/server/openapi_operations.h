// What each operation of evald's HTTP API takes and answers, for the OpenAPI document
// (openapi.h): one entry per route of Api's table and of the OpenAI-compatible routes, the
// bodies named by their proto messages (the schemas come from those).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace evald {

struct QueryParameter {
  std::string name;
  std::string type;  // "string" | "integer"
  std::string description;
  std::vector<std::string> values = {};  // an enum, when the parameter takes only these
  bool required = false;
};

struct OperationDoc {
  std::string method;  // "get", "post", "delete"
  std::string path;    // "{id}" is the path parameter
  std::string summary;
  std::string scope;     // "" public, "read", "submit", "model" (any token of serve --tokens)
  std::string request;   // the body's message (full name), or empty
  std::string response;  // the success body's message, or empty (then `other_types` only)
  int status = 200;
  std::vector<std::string> other_types = {};  // further success content types
  std::vector<QueryParameter> query = {};
  std::vector<std::pair<int, std::string>> errors = {};  // beside 401/403 (from the scope)
};

const std::vector<OperationDoc>& OperationDocs();

}  // namespace evald
