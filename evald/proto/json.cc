#include "evald/proto/json.h"

#include <google/protobuf/util/json_util.h>

#include "base/file_io.h"

namespace evald {

std::string ToJson(const google::protobuf::Message& message, bool pretty) {
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = true;
  opts.add_whitespace = pretty;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(message, &out, opts);
  return out;
}

Status WriteJson(const google::protobuf::Message& message, const std::string& path) {
  return WriteFileAtomic(path, ToJson(message));
}

}  // namespace evald
