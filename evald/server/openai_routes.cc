#include "evald/server/openai_routes.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <random>

#include "base/hash.h"
#include "evald/backends/core_backend.h"
#include "evald/backends/openai_wire.h"
#include "evald/server/openai_logprobs.h"

namespace evald {

namespace {

constexpr int kMaxN = 128;
constexpr int kMaxStops = 16;

std::string PathOf(const HttpRequest& req) {
  std::string target(req.target());
  size_t q = target.find('?');
  return q == std::string::npos ? target : target.substr(0, q);
}

HttpResponse ApiError(const HttpRequest& req, http::status status, const std::string& message,
                      const std::string& type = "invalid_request_error") {
  openai::CompletionResponse r;
  r.mutable_error()->set_message(message);
  r.mutable_error()->set_type(type);
  r.mutable_error()->mutable_code()->set_number_value(static_cast<int>(status));
  return JsonResponse(req, status, WireJson(r, false));
}

uint32_t NowSeconds() {
  return static_cast<uint32_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

OpenAiRoutes::OpenAiRoutes(std::shared_ptr<CoreEngine> engine, std::string model_name,
                           TokenScopes tokens)
    : engine_(std::move(engine)), model_name_(std::move(model_name)), tokens_(std::move(tokens)) {
  if (model_name_.empty()) model_name_ = engine_->name();
}

bool OpenAiRoutes::Matches(const HttpRequest& req) {
  std::string path = PathOf(req);
  return path == "/v1/completions" || path == "/v1/chat/completions" || path == "/v1/models";
}

namespace {

constexpr int kMaxMessages = 1024;

// A chat's messages, for the engine to render in the model's chat format.
StatusOr<std::vector<kernels::ChatMessage>> MessagesOf(const openai::CompletionRequest& r) {
  if (r.messages_size() == 0) return Status::InvalidArgument("messages must not be empty");
  if (r.messages_size() > kMaxMessages)
    return Status::InvalidArgument(fmt::format("at most {} messages", kMaxMessages));
  std::vector<kernels::ChatMessage> out;
  for (const auto& m : r.messages()) out.push_back({m.role(), MessageContentText(m.content())});
  return out;
}

// A completion's prompt: a string (or a list of one string).
StatusOr<std::string> PromptOf(const openai::CompletionRequest& r) {
  const auto& p = r.prompt();
  if (p.kind_case() == google::protobuf::Value::kStringValue) return p.string_value();
  if (p.has_list_value() && p.list_value().values_size() == 1 &&
      p.list_value().values(0).kind_case() == google::protobuf::Value::kStringValue)
    return p.list_value().values(0).string_value();
  return Status::InvalidArgument("prompt must be a string (or a list of one string)");
}

// Sampling values checked against the ranges OpenAI documents; the server's defaults where
// the request leaves them out.
StatusOr<SamplingSettings> SettingsOf(const openai::CompletionRequest& r) {
  SamplingSettings settings;
  settings.temperature = r.has_temperature() ? r.temperature() : 1.0;
  settings.top_p = r.has_top_p() ? r.top_p() : 1.0;
  settings.min_p = r.has_min_p() ? r.min_p() : 0.0;
  settings.top_k = r.has_top_k() ? r.top_k() : -1;
  if (!(settings.temperature >= 0 && settings.temperature <= 2))
    return Status::InvalidArgument("temperature must be 0..2");
  if (!(settings.top_p > 0 && settings.top_p <= 1))
    return Status::InvalidArgument("top_p must be in (0, 1]");
  if (!(settings.min_p >= 0 && settings.min_p <= 1))
    return Status::InvalidArgument("min_p must be 0..1");
  return settings;
}

Status AddStops(const openai::CompletionRequest& r, CoreRequest* core) {
  if (r.stop().kind_case() == google::protobuf::Value::kStringValue) {
    core->stop.push_back(r.stop().string_value());
  } else if (r.stop().has_list_value()) {
    for (const auto& v : r.stop().list_value().values()) {
      if (v.kind_case() != google::protobuf::Value::kStringValue)
        return Status::InvalidArgument("stop must hold strings");
      core->stop.push_back(v.string_value());
    }
  }
  if (core->stop.size() > kMaxStops)
    return Status::InvalidArgument(fmt::format("at most {} stop strings", kMaxStops));
  return Status::Ok();
}

// What the core is asked for; InvalidArgument (a 400) for anything out of range.
StatusOr<CoreRequest> CoreRequestOf(const openai::CompletionRequest& r, bool chat, int context) {
  CoreRequest core;
  if (chat) {
    auto messages = MessagesOf(r);
    if (!messages.ok()) return messages.status();
    core.messages = std::move(*messages);
  } else {
    auto prompt = PromptOf(r);
    if (!prompt.ok()) return prompt.status();
    core.prompt = std::move(*prompt);
    if (core.prompt.empty()) return Status::InvalidArgument("the prompt is empty");
  }
  core.n = r.has_n() ? r.n() : 1;
  if (core.n < 1 || core.n > kMaxN)
    return Status::InvalidArgument(fmt::format("n must be 1..{}", kMaxN));
  core.max_tokens = r.has_max_completion_tokens() ? r.max_completion_tokens()
                    : r.has_max_tokens()          ? r.max_tokens()
                    : chat                        ? context
                                                  : 16;
  if (core.max_tokens < 0) return Status::InvalidArgument("max_tokens must be >= 0");
  core.max_tokens = std::min(core.max_tokens, context);
  auto settings = SettingsOf(r);
  if (!settings.ok()) return settings.status();
  core.sampling = CoreSamplingOptions(*settings);
  core.seed = r.has_seed() ? r.seed() : static_cast<uint32_t>(std::random_device{}());
  EVALD_RETURN_IF_ERROR(AddStops(r, &core));
  auto logprobs = RequestedLogprobs(r, chat);
  if (!logprobs.ok()) return logprobs.status();
  core.logprobs = *logprobs;
  return core;
}

openai::Usage UsageOf(const CoreResult& result) {
  openai::Usage usage;
  usage.set_prompt_tokens(result.prompt_tokens);
  int completion_tokens = 0;
  for (const auto& c : result.completions) completion_tokens += static_cast<int>(c.tokens.size());
  usage.set_completion_tokens(completion_tokens);
  usage.set_total_tokens(result.prompt_tokens + completion_tokens);
  return usage;
}

}  // namespace

void OpenAiRoutes::Handle(const HttpRequest& req, HttpResponder& out) {
  if (!tokens_.empty()) {
    std::string auth(req[http::field::authorization]);
    if (auth.rfind("Bearer ", 0) != 0 || !tokens_.count(auth.substr(7))) {
      auto res = ApiError(req, http::status::unauthorized, "missing or unknown bearer token",
                          "authentication_error");
      res.set(http::field::www_authenticate, "Bearer");
      return out.Respond(std::move(res));
    }
  }
  const std::string path = PathOf(req);
  if (path == "/v1/models") return Models(req, out);
  if (req.method() != http::verb::post)
    return out.Respond(ApiError(req, http::status::method_not_allowed, "use POST"));
  Complete(req, out, path == "/v1/chat/completions");
}

void OpenAiRoutes::Models(const HttpRequest& req, HttpResponder& out) {
  if (req.method() != http::verb::get)
    return out.Respond(ApiError(req, http::status::method_not_allowed, "use GET"));
  openai::ModelList list;
  list.set_object("list");
  auto* card = list.add_data();
  card->set_id(model_name_);
  card->set_object("model");
  card->set_created(NowSeconds());
  card->set_owned_by("evald");
  out.Respond(JsonResponse(req, http::status::ok, WireJson(list, true)));
}

void OpenAiRoutes::Complete(const HttpRequest& req, HttpResponder& out, bool chat) {
  auto parsed = ParseCompletionRequest(req.body());
  if (!parsed.ok())
    return out.Respond(ApiError(req, http::status::bad_request, parsed.status().message()));
  const openai::CompletionRequest& r = *parsed;
  if (!r.model().empty() && r.model() != model_name_)
    return out.Respond(ApiError(
        req, http::status::not_found,
        "model '" + r.model() + "' is not served here (this server has '" + model_name_ + "')",
        "not_found_error"));
  auto core = CoreRequestOf(r, chat, engine_->context());
  if (!core.ok())
    return out.Respond(ApiError(req, http::status::bad_request, core.status().message()));
  Reply reply{req,
              out,
              chat,
              r.has_stream() && r.stream(),
              r.stream_options().include_usage(),
              (chat ? "chatcmpl-" : "cmpl-") + RandomHex(12),
              NowSeconds(),
              std::vector<bool>(static_cast<size_t>(core->n), false),
              core->logprobs >= 0,
              std::vector<int>(static_cast<size_t>(core->n), 0)};
  auto result = engine_->Generate(*core, [&](int s, std::string_view delta, const char* finish,
                                             std::span<const kernels::StepLogprobs> logprobs) {
    return StreamText(reply, s, delta, finish, logprobs);
  });
  if (!result.ok()) return Failed(reply, result.status());
  if (reply.stream) return EndStream(reply, UsageOf(*result));
  openai::CompletionResponse whole = Base(reply);
  for (size_t i = 0; i < result->completions.size(); ++i) {
    auto* c = whole.add_choices();
    c->set_index(static_cast<int>(i));
    if (chat) {
      c->mutable_message()->set_role("assistant");
      c->mutable_message()->set_content(result->completions[i].text);
    } else {
      c->set_text(result->completions[i].text);
    }
    c->set_finish_reason(result->completions[i].finish_reason);
    if (reply.logprobs) AddLogprobs(reply, static_cast<int>(i), result->completions[i].logprobs, c);
  }
  *whole.mutable_usage() = UsageOf(*result);
  out.Respond(JsonResponse(req, http::status::ok, WireJson(whole, false)));
}

openai::CompletionResponse OpenAiRoutes::Base(const Reply& reply) const {
  openai::CompletionResponse c;
  c.set_id(reply.id);
  c.set_created(reply.created);
  c.set_model(model_name_);
  c.set_object(reply.chat ? (reply.stream ? "chat.completion.chunk" : "chat.completion")
                          : "text_completion");
  return c;
}

void OpenAiRoutes::AddLogprobs(Reply& reply, int s, std::span<const kernels::StepLogprobs> steps,
                               openai::Choice* choice) const {
  AppendLogprobs(
      reply.chat, steps, [this](int token) { return engine_->TokenPiece(token); },
      &reply.text_offset[static_cast<size_t>(s)], choice->mutable_logprobs());
}

// One piece of sample s's text as a server-sent event; false stops the generation.
bool OpenAiRoutes::StreamText(Reply& reply, int s, std::string_view delta, const char* finish,
                              std::span<const kernels::StepLogprobs> logprobs) {
  HttpResponder& out = reply.out;
  if (!reply.stream) return !out.stopping();
  if (!out.started() && !out.BeginStream(http::status::ok, "text/event-stream")) {
    reply.client_gone = true;
    return false;
  }
  openai::CompletionResponse chunk = Base(reply);
  auto* c = chunk.add_choices();
  c->set_index(s);
  if (reply.chat) {
    if (!reply.role_sent[s]) c->mutable_delta()->set_role("assistant");
    reply.role_sent[s] = true;
    c->mutable_delta()->set_content(std::string(delta));
  } else {
    c->set_text(std::string(delta));
  }
  if (finish) c->set_finish_reason(finish);
  if (reply.logprobs) AddLogprobs(reply, s, logprobs, c);
  if (!out.Write("data: " + WireJson(chunk, false) + "\n\n")) {
    reply.client_gone = true;
    return false;
  }
  return !out.stopping();
}

void OpenAiRoutes::EndStream(Reply& reply, const openai::Usage& usage) {
  HttpResponder& out = reply.out;
  if (!out.started()) out.BeginStream(http::status::ok, "text/event-stream");
  if (reply.include_usage) {
    // The usage chunk carries `"choices": []`, as OpenAI's and vLLM's do: the official clients
    // iterate over it in every chunk.
    openai::CompletionResponse last = Base(reply);
    *last.mutable_usage() = usage;
    out.Write("data: " + WireJson(last, true) + "\n\n");
  }
  out.Write("data: [DONE]\n\n");
  out.End();
}

// A failed generation: an error event inside a stream already begun, else an error response.
void OpenAiRoutes::Failed(Reply& reply, const Status& st) {
  HttpResponder& out = reply.out;
  if (reply.client_gone) return;
  if (out.started()) {
    openai::CompletionResponse err;
    err.mutable_error()->set_message(st.message());
    err.mutable_error()->set_type("server_error");
    out.Write("data: " + WireJson(err, false) + "\n\n");
    out.End();
    return;
  }
  // A request that could outgrow the memory is one to make smaller, not to retry (a 400, as
  // servers answer one that exceeds the context).
  const bool bad =
      st.code() == Status::Code::kInvalidArgument || st.code() == Status::Code::kResourceExhausted;
  out.Respond(ApiError(reply.req,
                       bad ? http::status::bad_request : http::status::service_unavailable,
                       st.message(), bad ? "invalid_request_error" : "server_error"));
}

}  // namespace evald
