// evald's decoding core served as an OpenAI-compatible endpoint, so that one evald can sample
// for another and clients written for vLLM or llama.cpp's server work unchanged:
// GET /v1/models, POST /v1/completions and /v1/chat/completions (whole or streamed as
// server-sent events, with usage). Chat messages are joined as "system\n\nuser" (the same
// text the remote backend sends to completion endpoints); GGUF chat templates are not applied.
#pragma once

#include <memory>
#include <string>

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
  std::shared_ptr<CoreEngine> engine_;
  std::string model_name_;
  TokenScopes tokens_;
};

}  // namespace evald
