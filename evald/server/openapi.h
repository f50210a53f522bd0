// The OpenAPI 3.1 document of evald's HTTP API, served at /openapi.json and printed by `evald
// openapi`: the operations from one table (openapi_operations.cc), every request and response
// schema generated from the proto messages the handlers read and write (their descriptors,
// compiled in with the .proto comments as descriptions), so the document cannot drift from the
// wire format. Bodies follow protobuf's JSON mapping with the .proto field names.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace evald {

// The document as JSON (stable order: the same bytes for the same build).
StatusOr<std::string> OpenApiDocument();

// "METHOD /path" of every operation the document describes (upper-case methods, as
// Api::Routes() writes them).
std::vector<std::string> OpenApiOperations();

}  // namespace evald
