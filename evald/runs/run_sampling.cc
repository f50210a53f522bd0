#include "evald/runs/run_sampling.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cmath>

#include "base/file_io.h"
#include "evald/backends/core_backend.h"
#include "evald/backends/openai_wire.h"
#include "evald/backends/recorded_backend.h"
#include "evald/backends/remote_backend.h"
#include "kernels/chat/chat_format.h"

namespace evald {

Status NormalizeSampling(v1::SamplingParams* s) {
  if (s->preset() == "greedy") {
    s->set_temperature(0);
    s->set_top_p(0.01);
    s->set_n(1);
  } else if (s->preset() == "sampled") {
    s->set_temperature(0.85);
    s->set_top_p(0.95);
    s->set_n(20);
  } else if (!s->preset().empty()) {
    return Status::InvalidArgument("preset must be 'greedy' or 'sampled', not '" + s->preset() +
                                   "'");
  }
  if (s->n() == 0) s->set_n(1);
  if (s->top_p() == 0) s->set_top_p(1);
  if (s->max_tokens() == 0) s->set_max_tokens(1024);
  if (s->max_attempts() == 0) s->set_max_attempts(4);
  if (s->request_timeout_s() == 0) s->set_request_timeout_s(600);
  if (s->n() < 1 || s->n() > 1000) return Status::InvalidArgument("n must be 1..1000");
  if (!(s->temperature() >= 0 && s->temperature() <= 2))
    return Status::InvalidArgument("temperature must be 0..2");
  if (!(s->top_p() > 0 && s->top_p() <= 1))
    return Status::InvalidArgument("top_p must be in (0, 1]");
  if (s->top_k() < -1 || s->top_k() > 100000)
    return Status::InvalidArgument("top_k must be -1..100000");
  if (!(s->min_p() >= 0 && s->min_p() <= 1)) return Status::InvalidArgument("min_p must be 0..1");
  if (s->max_tokens() < 1 || s->max_tokens() > 131072)
    return Status::InvalidArgument("max_tokens must be 1..131072");
  if (s->seed() < 0 || s->seed() + s->n() > (int64_t{1} << 31))
    return Status::InvalidArgument("seed must be 0..2^31 - n (sample i uses seed + i)");
  if (s->max_attempts() < 1 || s->max_attempts() > 20)
    return Status::InvalidArgument("max_attempts must be 1..20");
  if (!(s->request_timeout_s() > 0 && s->request_timeout_s() <= 86400))
    return Status::InvalidArgument("request_timeout_s must be in (0, 86400]");
  if (s->stop_size() > 16) return Status::InvalidArgument("at most 16 stop strings");
  for (const auto& stop : s->stop())
    if (stop.empty() || stop.size() > 256)
      return Status::InvalidArgument("stop strings must be 1..256 bytes");
  return Status::Ok();
}

std::string BackendFor(const v1::Checkpoint& ck) {
  if (ck.format() == "gguf") return "core";
  if (ck.format() == "remote") return "remote";
  if (ck.format() == "recorded") return "recorded";
  return "samples";
}

Status NormalizeCheckpoint(v1::Checkpoint* ck, const OperatorPolicy& policy) {
  if (ck->format().empty())
    ck->set_format(!ck->location().empty()   ? "gguf"
                   : !ck->endpoint().empty() ? "remote"
                                             : "samples");
  if (auto kv = kernels::ParseKvCacheType(ck->kv_cache()); !kv.ok()) return kv.status();
  if (!ck->kv_cache().empty() && ck->format() != "gguf")
    return Status::InvalidArgument("kv_cache is for gguf checkpoints (the decoding core)");
  if (!ck->chat_format().empty()) {
    if (ck->format() != "gguf")
      return Status::InvalidArgument(
          "chat_format is for gguf checkpoints (a server renders its own template)");
    if (auto f = kernels::ChatFormatNamed(ck->chat_format()); !f.ok()) return f.status();
    if (ck->api().empty()) ck->set_api("chat");
  }
  if (!ck->api_key_env().empty() || !ck->api_key_file().empty())
    return Status::InvalidArgument(
        "api_key_env and api_key_file are not accepted: name a secret the operator declared "
        "(api_key_secret; evald serve --secret NAME=file:PATH|env:VAR)");
  if (ck->format() == "gguf") {
    if (auto api = ParseOpenAiApi(ck->api()); !api.ok()) return api.status();
    if (ck->api().empty()) ck->set_api("completions");
    if (!ck->chat_format().empty() && ck->api() != "chat")
      return Status::InvalidArgument("chat_format needs api chat");
  }
  if (ck->format() == "gguf" || ck->format() == "recorded") {
    if (ck->location().empty())
      return Status::InvalidArgument("a " + ck->format() + " checkpoint needs location");
    auto file = CheckCheckpointFile(
        ck->location(), ck->format() == "gguf" ? CheckpointFile::kModel : CheckpointFile::kRecorded,
        policy);
    if (!file.ok()) return file.status();
    ck->set_location(*file);
  } else if (ck->format() == "remote") {
    if (ck->replicas_size() > 64) return Status::InvalidArgument("at most 64 replicas");
    if (ck->endpoint().size() > 2048) return Status::InvalidArgument("endpoint too long");
    if (auto e = CheckEndpoint(ck->endpoint(), policy); !e.ok()) return e.status();
    for (const std::string& url : ck->replicas()) {
      if (url.size() > 2048) return Status::InvalidArgument("replicas: endpoint too long");
      if (auto e = CheckEndpoint(url, policy); !e.ok()) return e.status().Annotate("replicas");
    }
    if (ck->model().empty())
      return Status::InvalidArgument("a remote checkpoint needs model (the server's model name)");
    if (auto api = ParseOpenAiApi(ck->api()); !api.ok()) return api.status();
    if (ck->api().empty()) ck->set_api("completions");
    if (ck->max_concurrency() < 0 || ck->max_concurrency() > 1024)
      return Status::InvalidArgument("max_concurrency must be 0..1024");
    if (!ck->api_key_secret().empty() && !policy.secrets.count(ck->api_key_secret()))
      return Status::InvalidArgument("no secret named '" + ck->api_key_secret() +
                                     "' is declared by the operator");
  } else if (ck->format() != "samples") {
    return Status::InvalidArgument("format must be gguf, remote, recorded or samples");
  }
  return Status::Ok();
}

SamplingSettings SettingsOf(const v1::SamplingParams& s) {
  SamplingSettings out;
  out.temperature = s.temperature();
  out.top_p = s.top_p();
  out.top_k = s.top_k() > 0 ? s.top_k() : -1;
  out.min_p = s.min_p();
  out.max_tokens = s.max_tokens();
  out.stop.assign(s.stop().begin(), s.stop().end());
  return out;
}

namespace {

// The checkpoint's file, checked again now that a run reads it.
StatusOr<std::string> PolicedFile(const v1::Checkpoint& ck, CheckpointFile kind,
                                  const BackendOptions& options) {
  if (!options.policy) return Status::Internal("no operator policy");
  return CheckCheckpointFile(ck.location(), kind, *options.policy);
}

}  // namespace

StatusOr<std::unique_ptr<SamplingBackend>> MakeBackend(const v1::Checkpoint& ck,
                                                       const v1::RunSpec& spec,
                                                       const BackendOptions& options) {
  const std::string backend = spec.backend().empty() ? BackendFor(ck) : spec.backend();
  if (!options.policy) return Status::Internal("no operator policy");
  const OperatorPolicy& policy = *options.policy;
  if (backend == "core") {
    if (ck.format() != "gguf")
      return Status::InvalidArgument("backend core needs a gguf checkpoint");
    auto kv = kernels::ParseKvCacheType(ck.kv_cache());
    if (!kv.ok()) return kv.status();
    CoreEngine::Options core;
    core.threads = options.decode_threads;
    core.kv = *kv;
    core.chat_format = ck.chat_format();
    auto file = PolicedFile(ck, CheckpointFile::kModel, options);
    if (!file.ok()) return file.status();
    auto engine = CoreEngine::Load(*file, core);
    if (!engine.ok()) return engine.status();
    const bool chat = ck.api() == "chat";
    // A chat run whose model has no format it can be rendered in fails here, before sampling.
    if (auto format = (*engine)->ChatFormatInUse(); chat && !format.ok()) return format.status();
    return std::unique_ptr<SamplingBackend>(
        new CoreBackend(std::shared_ptr<CoreEngine>(std::move(*engine)), chat));
  }
  if (backend == "recorded") {
    if (ck.format() != "recorded")
      return Status::InvalidArgument("backend recorded needs a recorded checkpoint");
    std::vector<std::string> errors;
    auto file = PolicedFile(ck, CheckpointFile::kRecorded, options);
    if (!file.ok()) return file.status();
    auto recorded = RecordedBackend::Open(*file, &errors);
    if (!recorded.ok()) {
      spdlog::warn("{}: {}", *file, recorded.status().ToString());
      return Status::InvalidArgument("the checkpoint's recorded completions cannot be read");
    }
    for (const auto& e : errors) spdlog::warn("{}: {}", ck.location(), e);
    return std::unique_ptr<SamplingBackend>(std::move(*recorded));
  }
  if (backend == "remote") {
    if (ck.format() != "remote")
      return Status::InvalidArgument("backend remote needs a checkpoint with an endpoint");
    RemoteBackendOptions o;
    auto endpoint = CheckEndpoint(ck.endpoint(), policy);
    if (!endpoint.ok()) return endpoint.status();
    o.endpoint = endpoint->url;
    o.resolve.push_back(endpoint->resolve);
    for (const std::string& url : ck.replicas()) {
      auto replica = CheckEndpoint(url, policy);
      if (!replica.ok()) return replica.status().Annotate("replicas");
      o.replicas.push_back(replica->url);
      o.resolve.push_back(replica->resolve);
    }
    o.model = ck.model();
    auto api = ParseOpenAiApi(ck.api());
    if (!api.ok()) return api.status();
    o.api = *api;
    if (!ck.api_key_env().empty() || !ck.api_key_file().empty())
      return Status::InvalidArgument(
          "the checkpoint names a key variable or file, which the "
          "daemon no longer reads: name a declared secret");
    if (!ck.api_key_secret().empty()) {
      auto key = ReadSecret(ck.api_key_secret(), policy);
      if (!key.ok()) return key.status();
      o.api_key = std::move(*key);
    }
    if (ck.max_concurrency() > 0) o.max_concurrency = ck.max_concurrency();
    o.request_timeout_s = spec.sampling().request_timeout_s();
    o.max_attempts = spec.sampling().max_attempts();
    o.stream = !spec.sampling().no_stream();
    o.backoff_initial_s = options.backoff_initial_s;
    return std::unique_ptr<SamplingBackend>(new RemoteBackend(std::move(o)));
  }
  return Status::InvalidArgument("backend '" + backend + "' does not sample");
}

}  // namespace evald
