#include "evald/server/openapi.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include <boost/json.hpp>
// Boost.JSON header-only: its implementation compiled here, in its one user.
#include <boost/json/src.hpp>
#include <deque>
#include <set>

#include "evald/server/openapi_operations.h"

namespace evald::generated {
extern const unsigned char kApiDescriptorSet[];
extern const size_t kApiDescriptorSetSize;
}  // namespace evald::generated

namespace evald {

namespace {

namespace json = boost::json;
namespace pb = google::protobuf;

// The API's messages as protoc saw them, comments included (evald/proto/CMakeLists.txt).
const pb::DescriptorPool* ApiPool() {
  static const pb::DescriptorPool* pool = [] {
    pb::FileDescriptorSet set;
    auto* p = new pb::DescriptorPool;
    if (!set.ParseFromArray(generated::kApiDescriptorSet,
                            static_cast<int>(generated::kApiDescriptorSetSize)))
      return static_cast<const pb::DescriptorPool*>(p);
    for (const auto& file : set.file()) p->BuildFile(file);  // dependencies come first
    return static_cast<const pb::DescriptorPool*>(p);
  }();
  return pool;
}

// A comment as prose: the lines' leading spaces gone, joined where a sentence runs on.
std::string Prose(const std::string& comment) {
  std::string out;
  size_t start = 0;
  while (start < comment.size()) {
    size_t end = comment.find('\n', start);
    if (end == std::string::npos) end = comment.size();
    std::string line = comment.substr(start, end - start);
    line.erase(0, line.find_first_not_of(' '));
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (!line.empty()) out += (out.empty() ? "" : " ") + line;
    start = end + 1;
  }
  return out;
}

template <typename D>
std::string DescriptionOf(const D* d) {
  pb::SourceLocation loc;
  if (!d->GetSourceLocation(&loc)) return "";
  std::string text = Prose(loc.leading_comments);
  const std::string trailing = Prose(loc.trailing_comments);
  if (!trailing.empty()) text += (text.empty() ? "" : " ") + trailing;
  return text;
}

std::string Ref(const std::string& message) {
  return "#/components/schemas/" + message;
}

// Schemas of protobuf's well-known types, as its JSON mapping writes them.
std::optional<json::object> WellKnown(const std::string& name) {
  if (name == "google.protobuf.Value") return json::object{{"description", "any JSON value"}};
  if (name == "google.protobuf.Struct") return json::object{{"type", "object"}};
  if (name == "google.protobuf.ListValue") return json::object{{"type", "array"}};
  if (name == "google.protobuf.Timestamp")
    return json::object{{"type", "string"}, {"format", "date-time"}};
  return std::nullopt;
}

class SchemaBuilder {
 public:
  // The schema of one value of `field` (not its repetition); `pending` gets messages to describe.
  json::object ValueSchema(const pb::FieldDescriptor* field) {
    using T = pb::FieldDescriptor;
    switch (field->type()) {
      case T::TYPE_STRING:
        return {{"type", "string"}};
      case T::TYPE_BYTES:
        return {{"type", "string"}, {"contentEncoding", "base64"}};
      case T::TYPE_BOOL:
        return {{"type", "boolean"}};
      case T::TYPE_FLOAT:
      case T::TYPE_DOUBLE:
        return {{"type", "number"}};
      case T::TYPE_INT64:
      case T::TYPE_UINT64:
      case T::TYPE_SINT64:
      case T::TYPE_FIXED64:
      case T::TYPE_SFIXED64:
        // The JSON mapping writes 64-bit integers as strings and reads either.
        return {{"type", json::array{"string", "integer"}}, {"format", "int64"}};
      case T::TYPE_ENUM: {
        json::array names;
        for (int i = 0; i < field->enum_type()->value_count(); ++i)
          names.emplace_back(field->enum_type()->value(i)->name());
        return {{"type", "string"}, {"enum", names}};
      }
      case T::TYPE_MESSAGE:
      case T::TYPE_GROUP:
        return MessageRef(field->message_type());
      default:
        return {{"type", "integer"}, {"format", "int32"}};
    }
  }

  json::object MessageRef(const pb::Descriptor* message) {
    if (auto known = WellKnown(message->full_name())) return *known;
    if (seen_.insert(message->full_name()).second) pending_.push_back(message);
    return {{"$ref", Ref(message->full_name())}};
  }

  json::object FieldSchema(const pb::FieldDescriptor* field) {
    json::object schema;
    if (field->is_map()) {
      schema = {{"type", "object"},
                {"additionalProperties", ValueSchema(field->message_type()->map_value())}};
    } else if (field->is_repeated()) {
      schema = {{"type", "array"}, {"items", ValueSchema(field)}};
    } else {
      schema = ValueSchema(field);
    }
    const std::string description = DescriptionOf(field);
    if (!description.empty()) schema["description"] = description;
    return schema;
  }

  json::object MessageSchema(const pb::Descriptor* message) {
    json::object properties;
    for (int i = 0; i < message->field_count(); ++i)
      properties[message->field(i)->name()] = FieldSchema(message->field(i));
    json::object schema{{"type", "object"}, {"properties", std::move(properties)}};
    const std::string description = DescriptionOf(message);
    if (!description.empty()) schema["description"] = description;
    return schema;
  }

  // Every message reached from those referenced so far, in the order first referenced.
  json::object Components() {
    json::object schemas;
    while (!pending_.empty()) {
      const pb::Descriptor* next = pending_.front();
      pending_.pop_front();
      schemas[next->full_name()] = MessageSchema(next);
    }
    return schemas;
  }

 private:
  std::set<std::string> seen_;
  std::deque<const pb::Descriptor*> pending_;
};

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

json::object JsonContent(json::object schema) {
  return {{"application/json", {{"schema", std::move(schema)}}}};
}

class DocumentBuilder {
 public:
  StatusOr<json::object> Operation(const OperationDoc& op) {
    json::object out{{"summary", op.summary}, {"operationId", OperationId(op)}};
    json::array parameters;
    if (op.path.find("{id}") != std::string::npos)
      parameters.push_back(
          {{"name", "id"}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}});
    for (const QueryParameter& q : op.query) parameters.push_back(Query(q));
    if (!parameters.empty()) out["parameters"] = std::move(parameters);
    if (!op.request.empty()) {
      auto schema = Message(op.request);
      if (!schema.ok()) return schema.status();
      out["requestBody"] = {{"content", JsonContent(std::move(*schema))}};
    }
    auto responses = Responses(op);
    if (!responses.ok()) return responses.status();
    out["responses"] = std::move(*responses);
    if (op.scope.empty()) out["security"] = json::array{};
    return out;
  }

  json::object Components() {
    return {{"securitySchemes", SecuritySchemes()}, {"schemas", schemas_.Components()}};
  }

 private:
  StatusOr<json::object> Message(const std::string& name) {
    const pb::Descriptor* d = ApiPool()->FindMessageTypeByName(name);
    if (d == nullptr) return Status::Internal("the API's descriptors lack " + name);
    return schemas_.MessageRef(d);
  }

  static std::string OperationId(const OperationDoc& op) {
    std::string id = op.method;
    bool upper = true;
    for (char c : op.path) {
      if (c == '/' || c == '{' || c == '}' || c == '-' || c == '.' || c == '_') {
        upper = true;
      } else {
        id += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
        upper = false;
      }
    }
    return id;
  }

  static json::object Query(const QueryParameter& q) {
    json::object schema{{"type", q.type}};
    if (!q.values.empty()) {
      json::array values(q.values.begin(), q.values.end());
      schema["enum"] = std::move(values);
      schema["default"] = q.values.front();
    }
    json::object out{{"name", q.name}, {"in", "query"}, {"schema", std::move(schema)}};
    if (!q.description.empty()) out["description"] = q.description;
    if (q.required) out["required"] = true;
    return out;
  }

  StatusOr<json::object> Responses(const OperationDoc& op) {
    json::object content;
    if (!op.response.empty()) {
      auto schema = Message(op.response);
      if (!schema.ok()) return schema.status();
      content = JsonContent(std::move(*schema));
    }
    for (const auto& type : op.other_types) content[type] = json::object{};
    json::object responses;
    responses[std::to_string(op.status)] = {{"description", "success"},
                                            {"content", std::move(content)}};
    const bool openai = op.scope == "model";
    auto error = Message(openai ? "evald.openai.CompletionResponse" : "evald.v1.ErrorResponse");
    if (!error.ok()) return error.status();
    auto add = [&](int status, const std::string& why) {
      responses[std::to_string(status)] = {{"description", why}, {"content", JsonContent(*error)}};
    };
    if (!op.scope.empty()) add(401, "no token, or one this daemon does not know");
    if (op.scope == "submit") add(403, "the token lacks the submit scope");
    for (const auto& [status, why] : op.errors) add(status, why);
    return responses;
  }

  static json::object SecuritySchemes() {
    return {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}};
  }

  SchemaBuilder schemas_;
};

constexpr const char* kDescription =
    "Checkpoints and evaluation runs of LLM-generated Verilog. Bodies are protobuf's JSON "
    "mapping of evald/proto/*.proto with the .proto field names (unknown fields in a request "
    "are a 400). Every operation but /healthz and /openapi.json needs `Authorization: Bearer "
    "TOKEN`; tokens have the scope read or submit (submit implies read). Errors are "
    "{\"error\": \"...\", \"status\": CODE}. A daemon started with --model FILE.gguf also "
    "serves it as an OpenAI-compatible endpoint (the operations marked serve --model), with "
    "OpenAI-style errors.";

}  // namespace

StatusOr<std::string> OpenApiDocument() {
  DocumentBuilder builder;
  json::object paths;
  for (const OperationDoc& op : OperationDocs()) {
    auto operation = builder.Operation(op);
    if (!operation.ok()) return operation.status();
    json::value& path = paths[op.path];
    if (!path.is_object()) path.emplace_object();
    path.as_object()[op.method] = std::move(*operation);
  }
  json::object doc{
      {"openapi", "3.1.0"},
      {"info", {{"title", "evald API"}, {"version", EVALD_VERSION}, {"description", kDescription}}},
      {"servers", json::array{json::object{{"url", "http://127.0.0.1:8080"}}}},
      {"security", json::array{json::object{{"bearer", json::array{}}}}},
      {"paths", std::move(paths)},
  };
  doc["components"] = builder.Components();
  return json::serialize(doc);
}

std::vector<std::string> OpenApiOperations() {
  std::vector<std::string> out;
  for (const OperationDoc& op : OperationDocs()) out.push_back(Upper(op.method) + " " + op.path);
  return out;
}

}  // namespace evald
