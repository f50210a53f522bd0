// evald's decoding core served as an OpenAI-compatible endpoint, so that one evald can sample
// for another and clients written for vLLM or llama.cpp's server work unchanged:
// GET /v1/models, POST /v1/completions and /v1/chat/completions (whole or streamed as
// server-sent events, with usage). Chat messages are joined as "system\n\nuser" (the same
// text the remote backend sends to completion endpoints); GGUF chat templates are not applied.
#pragma once

#include <memory>
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
    std::vector<bool> role_sent;  // per sample: the chat role went out in its first chunk
    bool client_gone = false;
  };
  void Models(const HttpRequest& req, HttpResponder& out);
  void Complete(const HttpRequest& req, HttpResponder& out, bool chat);
  openai::CompletionResponse Base(const Reply& reply) const;
  bool StreamText(Reply& reply, int sample, std::string_view delta, const char* finish);
  void EndStream(Reply& reply, const openai::Usage& usage);
  void Failed(Reply& reply, const Status& st);

  std::shared_ptr<CoreEngine> engine_;
  std::string model_name_;
  TokenScopes tokens_;
};

}  // namespace evald
