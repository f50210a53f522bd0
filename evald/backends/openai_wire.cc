#include "evald/backends/openai_wire.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <set>

#include "base/utf8.h"

namespace evald {

StatusOr<OpenAiApi> ParseOpenAiApi(const std::string& name) {
  if (name.empty() || name == "completions") return OpenAiApi::kCompletions;
  if (name == "chat") return OpenAiApi::kChat;
  return Status::InvalidArgument("api must be 'completions' or 'chat', not '" + name + "'");
}

std::string BuildCompletionRequestJson(const SampleRequest& r, const std::string& model,
                                       OpenAiApi api, bool stream) {
  openai::CompletionRequest req;
  req.set_model(model);
  if (api == OpenAiApi::kChat) {
    if (!r.system.empty()) {
      auto* m = req.add_messages();
      m->set_role("system");
      m->mutable_content()->set_string_value(r.system);
    }
    auto* m = req.add_messages();
    m->set_role("user");
    m->mutable_content()->set_string_value(r.user);
  } else {
    req.mutable_prompt()->set_string_value(CompletionPromptText(r.system, r.user));
  }
  req.set_n(r.n);
  req.set_temperature(r.sampling.temperature);
  req.set_top_p(r.sampling.top_p);
  req.set_top_k(r.sampling.top_k > 0 ? r.sampling.top_k : -1);
  req.set_min_p(r.sampling.min_p);
  req.set_max_tokens(r.sampling.max_tokens);
  req.set_seed(r.seed);
  req.set_presence_penalty(0);
  req.set_frequency_penalty(0);
  req.set_repetition_penalty(1);
  req.set_repeat_penalty(1);
  req.set_stream(stream);
  if (stream) req.mutable_stream_options()->set_include_usage(true);
  if (!r.sampling.stop.empty()) {
    auto* list = req.mutable_stop()->mutable_list_value();
    for (const auto& s : r.sampling.stop) list->add_values()->set_string_value(s);
  }
  return WireJson(req, false);
}

namespace {

template <typename M>
StatusOr<M> ParseJson(std::string_view json, const char* what) {
  M m;
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = true;
  auto st = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &m, opts);
  if (!st.ok()) {
    // One line: protobuf's message carries the offending text and a caret below it.
    std::string why(st.message());
    why = why.substr(0, why.find('\n'));
    std::string head = SanitizeUtf8(json.substr(0, 120));
    for (char& c : head)
      if (c == '\n' || c == '\r') c = ' ';
    return Status::InvalidArgument(std::string("malformed ") + what + ": " + why +
                                   " (starts: " + head + ")");
  }
  return m;
}

}  // namespace

StatusOr<openai::CompletionResponse> ParseCompletionResponse(std::string_view json) {
  return ParseJson<openai::CompletionResponse>(json, "completion response");
}

namespace {

// Fields of OpenAI's API that evald's server does not implement: named in a 400 rather than
// silently ignored (a client asking for them would get an answer it did not ask for).
bool UnsupportedField(const std::string& name) {
  static const std::set<std::string> fields = {
      "echo",        "best_of",   "suffix",        "logit_bias",      "tools",
      "tool_choice", "functions", "function_call", "response_format", "parallel_tool_calls",
      "modalities",  "audio",     "prediction"};
  return fields.count(name) > 0;
}

}  // namespace

StatusOr<openai::CompletionRequest> ParseCompletionRequest(std::string_view json) {
  // Every field of the body is one evald reads, or the request is refused naming it.
  google::protobuf::Struct body;
  if (google::protobuf::util::JsonStringToMessage(
          google::protobuf::StringPiece(json.data(), json.size()), &body)
          .ok()) {
    const auto* d = openai::CompletionRequest::descriptor();
    for (const auto& [name, value] : body.fields()) {
      if (d->FindFieldByName(name) != nullptr || d->FindFieldByCamelcaseName(name) != nullptr)
        continue;
      return Status::InvalidArgument(
          UnsupportedField(name) ? "`" + SanitizeUtf8(name) + "` is not supported by this server"
                                 : "unknown field `" + SanitizeUtf8(name.substr(0, 64)) + "`");
    }
  }
  return ParseJson<openai::CompletionRequest>(json, "completion request");
}

std::string WireJson(const google::protobuf::Message& message, bool all_fields) {
  std::string out;
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = all_fields;
  (void)google::protobuf::util::MessageToJsonString(message, &out, opts);
  return out;
}

std::string MessageContentText(const google::protobuf::Value& content) {
  if (content.has_list_value()) {
    std::string text;
    for (const auto& part : content.list_value().values()) {
      if (!part.has_struct_value()) continue;
      const auto& f = part.struct_value().fields();
      auto t = f.find("text");
      if (t != f.end() && t->second.kind_case() == google::protobuf::Value::kStringValue)
        text += t->second.string_value();
    }
    return text;
  }
  return content.kind_case() == google::protobuf::Value::kStringValue ? content.string_value()
                                                                      : std::string();
}

}  // namespace evald
