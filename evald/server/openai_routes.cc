#include "evald/server/openai_routes.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <random>

#include "base/hash.h"
#include "evald/backends/core_backend.h"
#include "evald/backends/openai_wire.h"

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
  if (path == "/v1/models") {
    if (req.method() != http::verb::get)
      return out.Respond(ApiError(req, http::status::method_not_allowed, "use GET"));
    openai::ModelList list;
    list.set_object("list");
    auto* card = list.add_data();
    card->set_id(model_name_);
    card->set_object("model");
    card->set_created(NowSeconds());
    card->set_owned_by("evald");
    return out.Respond(JsonResponse(req, http::status::ok, WireJson(list, true)));
  }
  if (req.method() != http::verb::post)
    return out.Respond(ApiError(req, http::status::method_not_allowed, "use POST"));
  const bool chat = path == "/v1/chat/completions";

  auto parsed = ParseCompletionRequest(req.body());
  if (!parsed.ok())
    return out.Respond(ApiError(req, http::status::bad_request, parsed.status().message()));
  const openai::CompletionRequest& r = *parsed;
  if (!r.model().empty() && r.model() != model_name_)
    return out.Respond(ApiError(
        req, http::status::not_found,
        "model '" + r.model() + "' is not served here (this server has '" + model_name_ + "')",
        "not_found_error"));
  CoreRequest core;
  if (chat) {
    if (r.messages_size() == 0)
      return out.Respond(ApiError(req, http::status::bad_request, "messages must not be empty"));
    for (const auto& m : r.messages()) {
      std::string text = MessageContentText(m.content());
      if (text.empty()) continue;
      if (!core.prompt.empty()) core.prompt += "\n\n";
      core.prompt += text;
    }
  } else {
    const auto& p = r.prompt();
    if (p.kind_case() == google::protobuf::Value::kStringValue) {
      core.prompt = p.string_value();
    } else if (p.has_list_value() && p.list_value().values_size() == 1 &&
               p.list_value().values(0).kind_case() == google::protobuf::Value::kStringValue) {
      core.prompt = p.list_value().values(0).string_value();
    } else {
      return out.Respond(ApiError(req, http::status::bad_request,
                                  "prompt must be a string (or a list of one string)"));
    }
  }
  if (core.prompt.empty())
    return out.Respond(ApiError(req, http::status::bad_request, "the prompt is empty"));

  core.n = r.has_n() ? r.n() : 1;
  if (core.n < 1 || core.n > kMaxN)
    return out.Respond(
        ApiError(req, http::status::bad_request, fmt::format("n must be 1..{}", kMaxN)));
  const int context = engine_->context();
  core.max_tokens = r.has_max_tokens() ? r.max_tokens() : (chat ? context : 16);
  if (core.max_tokens < 0)
    return out.Respond(ApiError(req, http::status::bad_request, "max_tokens must be >= 0"));
  core.max_tokens = std::min(core.max_tokens, context);
  double temperature = r.has_temperature() ? r.temperature() : 1.0;
  double top_p = r.has_top_p() ? r.top_p() : 1.0;
  double min_p = r.has_min_p() ? r.min_p() : 0.0;
  if (!(temperature >= 0 && temperature <= 2))
    return out.Respond(ApiError(req, http::status::bad_request, "temperature must be 0..2"));
  if (!(top_p > 0 && top_p <= 1))
    return out.Respond(ApiError(req, http::status::bad_request, "top_p must be in (0, 1]"));
  if (!(min_p >= 0 && min_p <= 1))
    return out.Respond(ApiError(req, http::status::bad_request, "min_p must be 0..1"));
  SamplingSettings settings;
  settings.temperature = temperature;
  settings.top_p = top_p;
  settings.top_k = r.has_top_k() ? r.top_k() : -1;
  settings.min_p = min_p;
  core.sampling = CoreSamplingOptions(settings);
  core.seed = r.has_seed() ? r.seed() : static_cast<uint32_t>(std::random_device{}());
  if (r.stop().kind_case() == google::protobuf::Value::kStringValue) {
    core.stop.push_back(r.stop().string_value());
  } else if (r.stop().has_list_value()) {
    for (const auto& v : r.stop().list_value().values()) {
      if (v.kind_case() != google::protobuf::Value::kStringValue)
        return out.Respond(ApiError(req, http::status::bad_request, "stop must hold strings"));
      core.stop.push_back(v.string_value());
    }
  }
  if (core.stop.size() > kMaxStops)
    return out.Respond(ApiError(req, http::status::bad_request,
                                fmt::format("at most {} stop strings", kMaxStops)));

  const bool stream = r.has_stream() && r.stream();
  const bool include_usage = r.stream_options().include_usage();
  const std::string id = (chat ? "chatcmpl-" : "cmpl-") + RandomHex(12);
  const uint32_t created = NowSeconds();
  auto base = [&] {
    openai::CompletionResponse c;
    c.set_id(id);
    c.set_created(created);
    c.set_model(model_name_);
    c.set_object(chat ? (stream ? "chat.completion.chunk" : "chat.completion") : "text_completion");
    return c;
  };

  std::vector<bool> role_sent(static_cast<size_t>(core.n), false);
  bool client_gone = false;
  auto on_text = [&](int s, std::string_view delta, const char* finish) {
    if (!stream) return !out.stopping();
    if (!out.started() && !out.BeginStream(http::status::ok, "text/event-stream")) {
      client_gone = true;
      return false;
    }
    openai::CompletionResponse chunk = base();
    auto* c = chunk.add_choices();
    c->set_index(s);
    if (chat) {
      if (!role_sent[s]) c->mutable_delta()->set_role("assistant");
      role_sent[s] = true;
      c->mutable_delta()->set_content(std::string(delta));
    } else {
      c->set_text(std::string(delta));
    }
    if (finish) c->set_finish_reason(finish);
    if (!out.Write("data: " + WireJson(chunk, false) + "\n\n")) {
      client_gone = true;
      return false;
    }
    return !out.stopping();
  };
  auto result = engine_->Generate(core, on_text);
  if (!result.ok()) {
    if (client_gone) return;
    if (out.started()) {
      openai::CompletionResponse err;
      err.mutable_error()->set_message(result.status().message());
      err.mutable_error()->set_type("server_error");
      out.Write("data: " + WireJson(err, false) + "\n\n");
      out.End();
      return;
    }
    auto status = result.status().code() == Status::Code::kInvalidArgument
                      ? http::status::bad_request
                      : http::status::service_unavailable;
    return out.Respond(
        ApiError(req, status, result.status().message(),
                 status == http::status::bad_request ? "invalid_request_error" : "server_error"));
  }
  openai::Usage usage;
  usage.set_prompt_tokens(result->prompt_tokens);
  int completion_tokens = 0;
  for (const auto& c : result->completions) completion_tokens += static_cast<int>(c.tokens.size());
  usage.set_completion_tokens(completion_tokens);
  usage.set_total_tokens(result->prompt_tokens + completion_tokens);
  if (stream) {
    if (!out.started()) out.BeginStream(http::status::ok, "text/event-stream");
    if (include_usage) {
      openai::CompletionResponse last = base();
      *last.mutable_usage() = usage;
      out.Write("data: " + WireJson(last, false) + "\n\n");
    }
    out.Write("data: [DONE]\n\n");
    out.End();
    return;
  }
  openai::CompletionResponse whole = base();
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
  }
  *whole.mutable_usage() = usage;
  out.Respond(JsonResponse(req, http::status::ok, WireJson(whole, false)));
}

}  // namespace evald
