// Requests to and responses from OpenAI-compatible servers as JSON, through the schema in
// evald/proto/openai.proto and protobuf's JSON mapping. Shared by the remote backend (client)
// and evald's own completion endpoints (server).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "evald/backends/sampling_backend.h"
#include "evald/proto/openai.pb.h"

namespace evald {

enum class OpenAiApi { kCompletions, kChat };

StatusOr<OpenAiApi> ParseOpenAiApi(const std::string& name);  // "completions" | "chat"

// The request body for `request`: every sampling parameter explicit (servers otherwise apply
// their own defaults: llama.cpp's top_k 40 and min_p 0.05, OpenAI's temperature 1).
std::string BuildCompletionRequestJson(const SampleRequest& request, const std::string& model,
                                       OpenAiApi api, bool stream);

// A response or a streamed chunk. Unknown fields are ignored; a wrong type is an error.
StatusOr<openai::CompletionResponse> ParseCompletionResponse(std::string_view json);
StatusOr<openai::CompletionRequest> ParseCompletionRequest(std::string_view json);

// Compact JSON of a message with field names as declared (max_tokens, not maxTokens).
// `all_fields` also writes zero values and empty strings (what clients of a server expect).
std::string WireJson(const google::protobuf::Message& message, bool all_fields);

// The text of a message's content: a string, or the concatenated text parts of a list.
std::string MessageContentText(const google::protobuf::Value& content);

}  // namespace evald
