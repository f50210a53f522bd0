#include "evald/cli/serve_command.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <memory>

#include "base/file_io.h"
#include "base/numbers.h"
#include "evald/cli/executor_flags.h"
#include "evald/cli/grading_flags.h"
#include "evald/cli/report_io.h"
#include "evald/cluster/slurm_executor.h"
#include "evald/leaderboard/leaderboard.h"
#include "evald/runs/dataset_registry.h"
#include "evald/server/api.h"
#include "evald/server/http_server.h"
#include "evald/server/openai_routes.h"
#include "evald/server/openapi.h"
#include "evald/server/run_queue.h"
#include "evald/server/run_records.h"
#include "evald/server/run_requests.h"
#include "evald/store/store.h"
#include "kernels/chat/chat_format.h"

namespace evald {

namespace {

StatusOr<std::map<std::string, std::string>> ParseDatasets(const std::vector<std::string>& items) {
  std::map<std::string, std::string> out;
  for (const auto& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      return Status::InvalidArgument("--dataset expects NAME=PATH, got '" + item + "'");
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

StatusOr<std::unique_ptr<Store>> OpenStore(const std::string& dir) {
  auto store = Store::Open(dir);
  if (!store.ok() && store.status().message().find("lock") != std::string::npos)
    return Status::Unavailable(store.status().message() +
                               " (is a daemon using this store? query its API instead)");
  return store;
}

struct ServeFlags {
  std::string listen = "127.0.0.1:8080", data, tokens;
  std::vector<std::string> datasets;
  int jobs = 2;
  size_t max_body_mb = 64;
  int timeout_s = 30;
  std::string model, model_name;
  int decode_threads = 1;
  std::string kv_cache, chat_format;
  int max_generations = 16;
  double memory_gb = 0;  // --model: a request's KV cache and scratch at most (0: what is free)
  uint64_t min_free_mb = 256;
  ExecutorFlags executor;
  GradingFlagValues grading;  // what runs that state none grade with
  std::vector<std::string> allow_endpoints, secrets, recorded_roots, model_roots;
  Quotas quotas;
};

// What checkpoints may point at: the operator's flags (operator_policy.h).
StatusOr<OperatorPolicy> PolicyOf(const ServeFlags& f) {
  OperatorPolicy p;
  for (const auto& rule : f.allow_endpoints) {
    auto r = ParseEndpointRule(rule);
    if (!r.ok()) return r.status().Annotate("--allow-endpoint");
    p.endpoints.push_back(*r);
  }
  for (const auto& s : f.secrets) EVALD_RETURN_IF_ERROR(ParseSecret(s, &p.secrets));
  for (const auto* roots : {&f.recorded_roots, &f.model_roots}) {
    for (const auto& dir : *roots)
      if (!IsDirectory(dir)) return Status::InvalidArgument("not a directory: " + dir);
  }
  p.recorded_roots = f.recorded_roots;
  p.model_roots = f.model_roots;
  p.uploads_dir = f.data + "/uploads";
  return p;
}

StatusOr<HttpServerOptions> HttpOptionsOf(const ServeFlags& f) {
  size_t colon = f.listen.rfind(':');
  if (colon == std::string::npos) return Status::InvalidArgument("--listen expects ADDR:PORT");
  HttpServerOptions http_opts;
  http_opts.address = f.listen.substr(0, colon);
  auto port = ParseInt(std::string_view(f.listen).substr(colon + 1), 0, 65535);
  if (!port) return Status::InvalidArgument("bad port in --listen " + f.listen);
  http_opts.port = static_cast<uint16_t>(*port);
  http_opts.max_body_bytes = f.max_body_mb << 20;
  http_opts.read_timeout = http_opts.write_timeout = std::chrono::seconds(f.timeout_s);
  return http_opts;
}

// --model: the OpenAI-compatible routes over evald's decoding core (none without it).
StatusOr<std::unique_ptr<OpenAiRoutes>> ServedModel(const ServeFlags& f,
                                                    const TokenScopes& tokens) {
  if (f.model.empty()) return std::unique_ptr<OpenAiRoutes>();
  auto kv = kernels::ParseKvCacheType(f.kv_cache);
  if (!kv.ok()) return kv.status();
  CoreEngine::Options core;
  core.threads = f.decode_threads;
  core.kv = *kv;
  core.chat_format = f.chat_format;
  core.memory_budget = static_cast<int64_t>(f.memory_gb * 1e9);
  auto engine = CoreEngine::Load(f.model, core);
  if (!engine.ok()) return engine.status();
  auto format = (*engine)->ChatFormatInUse();
  spdlog::info("/v1/chat/completions: {}",
               format.ok() ? "chat format " + *format : format.status().message());
  // The file name, as vLLM and llama.cpp's server name a model by its path: general.name is
  // free text ("stories260K (llama2.c) converted by ...") no client would type.
  const std::string name =
      f.model_name.empty() ? std::filesystem::path(f.model).stem().string() : f.model_name;
  auto routes =
      std::make_unique<OpenAiRoutes>(std::shared_ptr<CoreEngine>(std::move(*engine)), name, tokens);
  spdlog::info("serving {} as model '{}'", f.model, routes->model_name());
  return routes;
}

// A store directory removed when the daemon exits (serve --model without --data).
class TemporaryStore {
 public:
  explicit TemporaryStore(std::string dir) : dir_(std::move(dir)) {}
  ~TemporaryStore() {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  TemporaryStore(const TemporaryStore&) = delete;
  TemporaryStore& operator=(const TemporaryStore&) = delete;

 private:
  std::string dir_;
};

// `serve --model FILE` alone serves the model: a temporary store when --data is not given, and
// without --tokens the OpenAI-compatible routes take no token (as vLLM without --api-key) while
// the REST API answers none. Without --model both flags are needed.
StatusOr<std::unique_ptr<TemporaryStore>> ServeModelDefaults(ServeFlags* f) {
  if (f->model.empty()) {
    if (f->data.empty() || f->tokens.empty())
      return Status::InvalidArgument(
          "--data (a store directory) and --tokens (a tokens file) are needed; only serve "
          "--model FILE.gguf runs without them");
    return std::unique_ptr<TemporaryStore>();
  }
  if (f->tokens.empty())
    spdlog::warn(
        "no --tokens: the OpenAI-compatible routes take requests without a token and the REST "
        "API refuses every request");
  if (!f->data.empty()) return std::unique_ptr<TemporaryStore>();
  char dir[] = "/tmp/evald-serve-XXXXXX";
  if (mkdtemp(dir) == nullptr) return Status::IoError("cannot create a temporary store");
  f->data = dir;
  spdlog::info("no --data: a temporary store in {} (removed at exit)", f->data);
  return std::make_unique<TemporaryStore>(f->data);
}

// The daemon until SIGTERM or SIGINT: store, run queue, REST API, and the OpenAI-compatible
// routes when a model is served.
int RunServe(ServeFlags f) {
  auto http = HttpOptionsOf(f);
  if (!http.ok()) return Fail(http.status());
  const HttpServerOptions& http_opts = *http;
  auto temporary = ServeModelDefaults(&f);
  if (!temporary.ok()) return Fail(temporary.status());
  TokenQuotas token_quotas;
  auto tokens = f.tokens.empty() ? StatusOr<TokenScopes>(TokenScopes{})
                                 : LoadTokens(f.tokens, f.quotas, &token_quotas);
  if (!tokens.ok()) return Fail(tokens.status());
  auto policy = PolicyOf(f);
  if (!policy.ok()) return Fail(policy.status());
  auto datasets = ParseDatasets(f.datasets);
  if (!datasets.ok()) return Fail(datasets.status());

  // Block the stop signals in every thread; the main thread waits for them below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto store = OpenStore(f.data);
  if (!store.ok()) return Fail(store.status());
  (*store)->set_min_free_bytes(f.min_free_mb << 20);
  auto grading_defaults = GradingSettingsOf(f.grading);
  if (!grading_defaults.ok()) return Fail(grading_defaults.status());
  QueueOptions queue_opts;
  queue_opts.resources.jobs = f.jobs;
  queue_opts.backend.decode_threads = f.decode_threads;
  auto executor = ExecutorOptionsOf(f.executor);
  if (!executor.ok()) return Fail(executor.status());
  queue_opts.resources.remote = ExecutorFactoryFor(*executor);
  auto served = ServedModel(f, *tokens);
  if (!served.ok()) return Fail(served.status());
  std::unique_ptr<OpenAiRoutes> completions = std::move(*served);
  // Never an endpoint of a checkpoint: the daemon itself (its port, known once it listens).
  std::atomic<int> listening_port{0};
  policy->self_port = [&listening_port] { return listening_port.load(); };
  DatasetRegistry registry(*datasets);
  RunRecords records(**store);
  RunRequests requests(store->get(), &registry, {std::move(*policy), *grading_defaults});
  queue_opts.backend.policy = &requests.policy();
  RunQueue queue(store->get(), &registry, queue_opts);
  requests.CountInto(&queue.counters());
  Api api({&records, &requests, &queue, &registry}, *tokens, token_quotas, f.quotas);
  HttpServer server(http_opts, [&api](const HttpRequest& req) { return api.Handle(req); });
  if (completions)
    server.SetLongHandler(
        &OpenAiRoutes::Matches,
        [&completions](const HttpRequest& req, HttpResponder& out) {
          completions->Handle(req, out);
        },
        f.max_generations);
  if (Status st = server.Start(); !st.ok()) return Fail(st);
  listening_port = server.port();
  // Runs (resumed ones too) start once the daemon knows its own port.
  if (Status st = queue.Start(); !st.ok()) return Fail(st);
  spdlog::info("evald listening on http://{}:{} (store {})", http_opts.address, server.port(),
               f.data);
  std::cout << "listening " << http_opts.address << ":" << server.port() << std::endl;

  int sig = 0;
  sigwait(&stop_signals, &sig);
  spdlog::info(
      "signal {}: stopping (requests in flight are answered; a running run resumes at the next "
      "start)",
      sig);
  server.Stop();
  queue.Stop();
  return 0;
}

}  // namespace

void RegisterServeCommand(CLI::App& app, std::function<int()>* run) {
  auto f = std::make_shared<ServeFlags>();
  auto* cmd = app.add_subcommand("serve", "run the evald daemon (REST API under /v1)");
  cmd->add_option("--listen", f->listen, "ADDR:PORT (port 0 picks a free one)");
  cmd->add_option("--data", f->data,
                  "store directory (RocksDB); needed but with --model (then: a temporary one)");
  cmd->add_option("--tokens", f->tokens,
                  "file of bearer tokens: TOKEN read|submit per line; needed but with --model "
                  "(then: the model's routes take no token, the REST API answers none)");
  cmd->add_option("--dataset", f->datasets, "NAME=PATH a run may name (builtin is always there)");
  cmd->add_option("--jobs,-j", f->jobs, "sandboxes running in parallel")->check(CLI::Range(1, 256));
  AddExecutorFlags(cmd, &f->executor);
  AddGradingFlags(cmd, &f->grading);
  cmd->add_option("--max-body-mb", f->max_body_mb, "largest request body");
  cmd->add_option("--min-free-mb", f->min_free_mb,
                  "free space kept on the store's filesystem: under it, writes get 507 and "
                  "grading pauses until space returns");
  cmd->add_option("--timeout", f->timeout_s, "read/write timeout in seconds");
  cmd->add_option("--model", f->model,
                  "a GGUF file to serve as an OpenAI-compatible endpoint (/v1/completions, "
                  "/v1/chat/completions, /v1/models)");
  cmd->add_option("--model-name", f->model_name, "the served model's name (default: the file's)");
  cmd->add_option("--kv-cache", f->kv_cache, "--model: KV cache f32 (default) | q8_0");
  cmd->add_option("--chat-format", f->chat_format,
                  "--model: how /v1/chat/completions renders messages (" +
                      kernels::ChatFormatNameList() +
                      "; default: recognised from the file's template)");
  cmd->add_option("--memory-gb", f->memory_gb,
                  "--model: the KV cache and scratch one request may need once its samples reach "
                  "max_tokens; larger requests get a 400 (default: the memory available then)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--decode-threads", f->decode_threads,
                  "threads of the decoding core (served model and core-backend runs)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--max-generations", f->max_generations,
                  "completion requests in progress at once; more get 503")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--allow-endpoint", f->allow_endpoints,
                  "hosts and networks checkpoint endpoints may be at: HOST[:PORT], ADDR/PREFIX or "
                  "public (any globally routable address); loopback, private, link-local and "
                  "metadata addresses only where a rule names them (repeatable; none by default)");
  cmd->add_option("--secret", f->secrets,
                  "NAME=file:PATH or NAME=env:VAR: an API key checkpoints may name "
                  "(api_key_secret); nothing else is ever read for one (repeatable)");
  cmd->add_option("--recorded-root", f->recorded_roots,
                  "a directory recorded checkpoints may be read from (repeatable; uploads are "
                  "always allowed)");
  cmd->add_option("--model-root", f->model_roots,
                  "a directory GGUF checkpoints may be read from (repeatable)");
  cmd->add_option("--quota-runs", f->quotas.runs_in_flight,
                  "runs one token may have queued or running (tokens file: runs=N)")
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--quota-samples", f->quotas.queued_samples,
                  "samples one token's runs may leave to grade (tokens file: samples=N)");
  cmd->add_option("--quota-bytes", f->quotas.stored_bytes,
                  "bytes one token's runs may store (tokens file: bytes=N)");
  cmd->callback([f, run] { *run = [f] { return RunServe(*f); }; });
}

void RegisterOpenApiCommand(CLI::App& app, std::function<int()>* run) {
  app.add_subcommand("openapi", "print the OpenAPI 3.1 document the daemon serves at /openapi.json")
      ->callback([run] {
        *run = [] {
          auto document = OpenApiDocument();
          if (!document.ok()) return Fail(document.status());
          std::cout << *document << "\n";
          return 0;
        };
      });
}

void RegisterExportCommand(CLI::App& app, std::function<int()>* run) {
  struct Flags {
    std::string data, format = "html", out, dataset;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand("export", "export a leaderboard of the finished runs in a store");
  cmd->add_option("--data", f->data, "store directory")->required();
  cmd->add_option("--format", f->format, "csv | json | markdown | html");
  cmd->add_option("--out", f->out, "output file (default: standard output)");
  cmd->add_option("--dataset", f->dataset, "only runs on this dataset");
  cmd->callback([f, run] {
    *run = [f]() -> int {
      auto store = Store::OpenForReading(f->data);  // a running daemon may hold it
      if (!store.ok()) return Fail(store.status());
      RunRecords runs(**store);
      std::map<std::string, v1::Checkpoint> cks;
      auto listed_cks = runs.ListCheckpoints();
      if (!listed_cks.ok()) return Fail(listed_cks.status());
      for (auto& ck : *listed_cks) cks[ck.id()] = ck;
      RunFilter filter;
      filter.dataset = f->dataset;
      filter.with_problems = true;  // tiers compare runs problem by problem
      auto listed_runs = runs.ListRuns(filter);
      if (!listed_runs.ok()) return Fail(listed_runs.status());
      auto text = RenderLeaderboard(BuildLeaderboard(*listed_runs, cks), f->format);
      if (!text.ok()) return Fail(text.status());
      if (f->out.empty()) {
        std::cout << *text;
        return 0;
      }
      Status st = WriteFileAtomic(f->out, *text);
      return st.ok() ? 0 : Fail(st);
    };
  });
}

}  // namespace evald
