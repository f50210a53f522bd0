// evald's decoding core served as an OpenAI-compatible endpoint, so that one evald can sample
// for another and clients written for vLLM or llama.cpp's server work unchanged:
// GET /v1/models, POST /v1/completions and /v1/chat/completions (whole or streamed as
// server-sent events, with usage, log-probs on request). Chats are rendered in the model's chat
// format (CoreEngine); fields evald does not implement are refused by name (openai_wire.h).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "evald/proto/openai.pb.h"

#include "evald/backends/core_engine.h"
#include "evald/server/api.h"
#include "evald/server/http_server.h"

namespace evald {

class OpenAiRoutes {
 public:
  // `tokens` empty: no authentication; otherwise any token of the file is accepted.
  OpenAiRoutes(std::shared_ptr<CoreEngine> engine, std::string model_name, TokenScopes tokens);

  static bool Matches(const HttpRequest& request);
  // "METHOD /path" of each route (as Api::Routes() writes them).
  static std::vector<std::string> Routes() {
    return {"GET /v1/models", "POST /v1/completions", "POST /v1/chat/completions"};
  }
  void Handle(const HttpRequest& request, HttpResponder& responder);

  const std::string& model_name() const { return model_name_; }

 private:
  // One completion request being answered.
  struct Reply {
    const HttpRequest& req;
    HttpResponder& out;
    bool chat, stream, include_usage;
    std::string id;
    uint32_t created;
    std::vector<bool> role_sent;   // per sample: the chat role went out in its first chunk
    bool logprobs;                 // the request asked for them
    std::vector<int> text_offset;  // per sample: bytes of text its log-probs have covered
    bool client_gone = false;
  };
  void Models(const HttpRequest& req, HttpResponder& out);
  void Complete(const HttpRequest& req, HttpResponder& out, bool chat);
  openai::CompletionResponse Base(const Reply& reply) const;
  bool StreamText(Reply& reply, int sample, std::string_view delta, const char* finish,
                  std::span<const kernels::StepLogprobs> logprobs);
  void AddLogprobs(Reply& reply, int sample, std::span<const kernels::StepLogprobs> steps,
                   openai::Choice* choice) const;
  void EndStream(Reply& reply, const openai::Usage& usage);
  void Failed(Reply& reply, const Status& st);

  std::shared_ptr<CoreEngine> engine_;
  std::string model_name_;
  TokenScopes tokens_;
};

}  // namespace evald
