// The JSON form of evald's messages: protobuf's JSON mapping with the .proto field names and
// every field present (what `--json`, the REST API's bodies and exported files are).
#pragma once

#include <google/protobuf/message.h>

#include <string>

#include "base/status.h"

namespace evald {

// `pretty` indents it.
std::string ToJson(const google::protobuf::Message& message, bool pretty = true);
// Written whole (a temporary file renamed), never through a link.
Status WriteJson(const google::protobuf::Message& message, const std::string& path);

}  // namespace evald
