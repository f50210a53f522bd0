#include "evald/cli/run_command.h"
#include "evald/cli/progress_display.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <unistd.h>

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "datasets/task.h"
#include "evald/cli/executor_flags.h"
#include "evald/cli/grading_flags.h"
#include "evald/cli/report_io.h"
#include "evald/cluster/slurm_executor.h"
#include "evald/proto/json.h"
#include "evald/runs/dataset_registry.h"
#include "evald/runs/sampling_stage.h"
#include "evald/runs/stored_run.h"
#include "evald/server/run_records.h"
#include "evald/server/run_requests.h"
#include "evald/store/store.h"
#include "evald/text/report_printer.h"
#include "kernels/chat/chat_format.h"

namespace evald {

namespace {

// A temporary store that goes away with the command.
struct TempDir {
  std::string path;
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

struct Flags {
  std::string model, endpoint, model_name, api = "completions", api_key_env, api_key_file, recorded,
                                           hardware, name;
  int concurrency = 8;
  std::string dataset = "builtin", task = "spec-to-rtl", k = "1,5";
  std::vector<std::string> problems, stop, labels, replicas;
  std::string preset;
  int n = 0, top_k = -1, max_tokens = 1024, shots = 0, jobs = 2, decode_threads = 1, attempts = 4;
  double temperature = 0, top_p = 0, min_p = 0, timeout_s = 600;
  int64_t seed = 0;
  bool rules = false, explain = false, system_in_prompt = false, no_stream = false;
  std::string prompt_style = "benchmark";
  std::string data, json_out, kv_cache, chat_format;
  std::string drift_base, drift_completions = "samples";
  GradingFlagValues grading;
  ExecutorFlags executor;
};

// The name the command's own --api-key-env / --api-key-file goes by in its policy.
constexpr const char* kCliKey = "cli";

// The user of `evald run` is its operator: the policy allows exactly what the command line
// names (its endpoints, its key, the directory of its file) and nothing else.
StatusOr<OperatorPolicy> PolicyOf(const Flags& f) {
  OperatorPolicy p;
  std::vector<std::string> urls = f.replicas;
  if (!f.endpoint.empty()) urls.push_back(f.endpoint);
  for (const std::string& url : urls) {
    auto parsed = boost::urls::parse_uri(url);
    if (!parsed) return Status::InvalidArgument("not a URL: " + url);
    std::string host(parsed->host_address());
    const std::string port = parsed->has_port()            ? std::string(parsed->port())
                             : parsed->scheme() == "https" ? "443"
                                                           : "80";
    auto rule = ParseEndpointRule(
        (parsed->host_type() == boost::urls::host_type::ipv6 ? "[" + host + "]" : host) + ":" +
        port);
    if (!rule.ok()) return rule.status();
    p.endpoints.push_back(*rule);
  }
  if (!f.api_key_env.empty() && !f.api_key_file.empty())
    return Status::InvalidArgument("give --api-key-env or --api-key-file, not both");
  if (!f.api_key_env.empty()) p.secrets[kCliKey] = {SecretSource::Kind::kEnv, f.api_key_env};
  if (!f.api_key_file.empty()) p.secrets[kCliKey] = {SecretSource::Kind::kFile, f.api_key_file};
  std::error_code ec;
  for (const std::string& file : {f.model, f.drift_base, f.recorded}) {
    if (file.empty()) continue;
    const auto dir = std::filesystem::canonical(file, ec).parent_path();
    if (ec) return Status::InvalidArgument(file + " is not a readable file");
    (file == f.recorded ? p.recorded_roots : p.model_roots).push_back(dir.string());
  }
  return p;
}

std::string Absolute(const std::string& path) {
  std::error_code ec;
  auto a = std::filesystem::absolute(path, ec);
  return ec ? path : a.string();
}

// --drift-base: the baseline GGUF file, registered as a checkpoint of its own.
v1::Checkpoint DriftBaseOf(const Flags& f) {
  v1::Checkpoint ck;
  ck.set_format("gguf");
  ck.set_location(Absolute(f.drift_base));
  ck.set_name(std::filesystem::path(ck.location()).filename().string());
  return ck;
}

v1::Checkpoint CheckpointOf(const Flags& f) {
  v1::Checkpoint ck;
  if (!f.model.empty()) {
    ck.set_format("gguf");
    ck.set_location(Absolute(f.model));
    ck.set_kv_cache(f.kv_cache);
    ck.set_api(f.chat_format.empty() ? f.api : "chat");  // a chat format implies --api chat
    ck.set_chat_format(f.chat_format);
  } else if (!f.recorded.empty()) {
    ck.set_format("recorded");
    ck.set_location(Absolute(f.recorded));
  } else {
    ck.set_format("remote");
    ck.set_endpoint(f.endpoint);
    for (const std::string& r : f.replicas) ck.add_replicas(r);
    ck.set_model(f.model_name);
    ck.set_api(f.api);
    if (!f.api_key_env.empty() || !f.api_key_file.empty()) ck.set_api_key_secret(kCliKey);
    ck.set_max_concurrency(f.concurrency);
  }
  ck.set_hardware(f.hardware);
  ck.set_name(!f.name.empty()          ? f.name
              : !f.model_name.empty()  ? f.model_name
              : !ck.location().empty() ? std::filesystem::path(ck.location()).filename().string()
                                       : f.endpoint);
  return ck;
}

StatusOr<v1::RunSpec> SpecOf(const Flags& f, const std::string& checkpoint_id,
                             const std::vector<int>& ks) {
  v1::RunSpec spec;
  spec.set_checkpoint_id(checkpoint_id);
  spec.set_dataset(f.dataset);
  spec.set_task(f.task);
  auto grading = GradingSettingsOf(f.grading);
  if (!grading.ok()) return grading.status();
  *spec.mutable_grading() = std::move(*grading);
  for (int k : ks) spec.add_k(k);
  for (const auto& p : f.problems) spec.add_problems(p);
  spec.mutable_prompt()->set_shots(f.shots);
  spec.mutable_prompt()->set_rules(f.rules);
  spec.mutable_prompt()->set_explain(f.explain);
  spec.mutable_prompt()->set_system_in_prompt(f.system_in_prompt);
  auto style = ParsePromptStyle(f.prompt_style);
  if (!style.ok()) return style.status();
  spec.mutable_prompt()->set_style(ProtoPromptStyle(*style));
  auto* s = spec.mutable_sampling();
  s->set_preset(f.preset);
  s->set_n(f.n);
  s->set_temperature(f.temperature);
  s->set_top_p(f.top_p);
  s->set_top_k(f.top_k);
  s->set_min_p(f.min_p);
  s->set_max_tokens(f.max_tokens);
  s->set_seed(f.seed);
  for (const auto& stop : f.stop) s->add_stop(stop);
  s->set_request_timeout_s(f.timeout_s);
  s->set_max_attempts(f.attempts);
  s->set_no_stream(f.no_stream);
  for (const auto& l : f.labels) {
    size_t eq = l.find('=');
    if (eq == std::string::npos || eq == 0)
      return Status::InvalidArgument("--label expects KEY=VALUE");
    (*spec.mutable_labels())[l.substr(0, eq)] = l.substr(eq + 1);
  }
  return spec;
}

// Drives a stored run to its end in this process (the daemon's queue does the same per run).
class InProcessRuns {
 public:
  InProcessRuns(Store* store, DatasetRegistry* datasets, const Flags& f, GradingResources resources)
      : store_(store), datasets_(datasets), guard_(store), resources_(std::move(resources)) {
    resources_.store = store;
    resources_.guard = &guard_;
    backend_.decode_threads = f.decode_threads;
  }
  void SetPolicy(const OperatorPolicy* policy) { backend_.policy = policy; }

  // Runs an earlier interrupted `evald run --data DIR` left QUEUED or RUNNING, each to its end.
  Status ResumeLeftovers() {
    auto runs = RunRecords(*store_).ListRuns({});
    if (!runs.ok()) return runs.status();
    for (v1::Run& run : *runs) {
      if (run.state() != v1::QUEUED && run.state() != v1::RUNNING) continue;
      spdlog::info("resuming run {} ({} of {} samples graded)", run.id(), run.samples_done(),
                   run.samples_total());
      (void)Drive(&run);
    }
    return Status::Ok();
  }

  RunEnd Drive(v1::Run* run) {
    StoredRunContext c;
    c.store = store_;
    c.resources = resources_;
    c.backend = backend_;
    c.counters = &counters_;
    c.write = [this](Store::Batch& batch) { return store_->Write(batch).ok(); };
    c.progress = MakeProgressDisplay(::isatty(2));
    c.resources.progress = c.progress;
    auto task = ParseTask(run->spec().task());
    auto dataset = task.ok() ? datasets_->Find(run->spec().dataset(), *task) : task.status();
    RunEnd end{v1::FAILED, dataset.ok() ? "" : dataset.status().ToString()};
    if (dataset.ok()) {
      c.dataset = *dataset;
      end = DriveStoredRun(run, c).value_or(end);  // nothing stops this process's token
    }
    (void)FinishStoredRun(run, end, c);
    return end;
  }

 private:
  Store* store_;
  DatasetRegistry* datasets_;
  GradingInFlight guard_;
  GradingResources resources_;
  BackendOptions backend_;
  RunCounters counters_;
};

StatusOr<GradingResources> ResourcesOf(const Flags& f) {
  GradingResources r;
  r.jobs = f.jobs;
  auto executor = ExecutorOptionsOf(f.executor);
  if (!executor.ok()) return executor.status();
  r.remote = ExecutorFactoryFor(*executor);
  return r;
}

// Prints (or writes) the run's report; fails when the run did not succeed.
int Report(const Flags& f, const v1::Run& run, const RunEnd& end, const Store& store) {
  auto report = StoredRunReport(store, run);
  if (!report.ok()) return Fail(report.status());
  if (end.state == v1::SUCCEEDED) PrintEvalReport(*report, std::cout);
  if (!f.json_out.empty()) {
    if (Status st = WriteJson(*report, f.json_out); !st.ok()) return Fail(st);
  }
  if (end.state != v1::SUCCEEDED) {
    if (report->has_serving()) PrintServingMetrics(report->serving(), std::cerr);
    return Fail(Status::Unavailable(
        fmt::format("run {} {}: {}", run.id(), v1::RunState_Name(end.state), end.reason)));
  }
  if (!f.data.empty()) std::cout << "run " << run.id() << " stored in " << f.data << "\n";
  return 0;
}

int RunRun(const Flags& f) {
  auto ks = ParseKList(f.k);
  if (!ks.ok()) return Fail(ks.status());
  auto resources = ResourcesOf(f);
  if (!resources.ok()) return Fail(resources.status());
  auto policy = PolicyOf(f);
  if (!policy.ok()) return Fail(policy.status());
  TempDir temp;
  std::string data = f.data;
  if (data.empty()) {
    char tmpl[] = "/tmp/evald-run-XXXXXX";
    if (!mkdtemp(tmpl)) return Fail(Status::IoError("cannot make a temporary store"));
    temp.path = data = tmpl;
  }
  auto store = Store::Open(data);
  if (!store.ok()) return Fail(store.status());
  std::map<std::string, std::string> paths;
  if (f.dataset != "builtin") paths[f.dataset] = f.dataset;
  DatasetRegistry datasets(paths);
  InProcessRuns runs(store->get(), &datasets, f, std::move(*resources));
  runs.SetPolicy(&*policy);
  // First: runs an earlier interrupted `evald run --data DIR` left.
  if (Status st = runs.ResumeLeftovers(); !st.ok()) return Fail(st);
  RunRequests requests(store->get(), &datasets, {*policy, {}});
  v1::Checkpoint ck = CheckpointOf(f);
  if (Status st = requests.PutCheckpoint(&ck); !st.ok()) return Fail(st);
  auto spec = SpecOf(f, ck.id(), *ks);
  if (!spec.ok()) return Fail(spec.status());
  if (!f.drift_base.empty()) {
    v1::Checkpoint base = DriftBaseOf(f);
    if (Status st = requests.PutCheckpoint(&base); !st.ok())
      return Fail(st.Annotate("--drift-base"));
    spec->mutable_drift()->set_base_checkpoint_id(base.id());
    spec->mutable_drift()->set_completions(f.drift_completions);
  }
  auto created = requests.CreateRun(*spec, "");
  if (!created.ok()) return Fail(created.status());
  v1::Run run = std::move(*created);
  spdlog::info("run {}: {} samples ({} problems x n={}) from {}", run.id(), run.samples_total(),
               run.samples_total() / std::max(1, run.spec().sampling().n()),
               run.spec().sampling().n(), ck.format() == "remote" ? ck.endpoint() : ck.location());
  const RunEnd end = runs.Drive(&run);
  return Report(f, run, end, **store);
}

}  // namespace

void RegisterRunCommand(CLI::App& app, std::function<int()>* run) {
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "run", "sample a checkpoint over a dataset, then grade and score it (no daemon needed)");
  auto* source = cmd->add_option_group("checkpoint", "what to sample");
  source->add_option("--model", f->model, "a local GGUF file (evald's decoding core)");
  source->add_option("--endpoint", f->endpoint,
                     "an OpenAI-compatible server's base URL (vLLM, llama.cpp, evald serve)");
  source->add_option("--recorded", f->recorded, "a samples JSONL of completions made elsewhere");
  cmd->add_option("--replica", f->replicas,
                  "another base URL serving the same model as --endpoint (repeatable)");
  source->require_option(1);
  cmd->add_option("--model-name", f->model_name, "the endpoint's model name");
  cmd->add_option("--api", f->api,
                  "completions | chat: the endpoint's flavour; with --model, chat renders the "
                  "prompt in the model's chat format");
  cmd->add_option("--chat-format", f->chat_format,
                  "--model: the chat format (" + kernels::ChatFormatNameList() +
                      "; implies --api chat; default: recognised from the file's template)");
  cmd->add_option("--drift-base", f->drift_base,
                  "--model: after grading, measure how far the file's distributions drift from "
                  "this GGUF file of the same checkpoint (F16/Q8_0; teacher-forced, evald drift)");
  cmd->add_option("--drift-completions", f->drift_completions,
                  "what --drift-base scores after each prompt: samples (each problem's first "
                  "sample, after the prompt the model was given) | references");
  cmd->add_option("--api-key-env", f->api_key_env, "environment variable holding the API key");
  cmd->add_option("--api-key-file", f->api_key_file, "file holding the API key");
  cmd->add_option("--concurrency", f->concurrency, "requests in flight to the endpoint")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--hardware", f->hardware, "where the model is served (a label)");
  cmd->add_option("--name", f->name, "checkpoint name (default: the model or file)");
  cmd->add_option("--dataset", f->dataset,
                  "builtin, a verilog-eval checkout / dataset_* folder, a VerilogEval v1 "
                  "checkout / problem file (with --task verilog-eval-v1-*), or an RTLLM "
                  "checkout (with --task rtllm2)");
  cmd->add_option("--task", f->task, TaskChoices());
  cmd->add_option("--problems", f->problems, "only these problems")->delimiter(',');
  cmd->add_option("--preset", f->preset,
                  "verilog-eval's settings: greedy (t 0, top_p 0.01, n 1) | sampled (t 0.85, "
                  "top_p 0.95, n 20)");
  cmd->add_option("--n", f->n, "samples per problem (default 1)");
  cmd->add_option("--temperature", f->temperature, "sampling temperature (default 0)");
  cmd->add_option("--top-p", f->top_p, "nucleus sampling (default 1)");
  cmd->add_option("--top-k", f->top_k, "top-k (-1: off)");
  cmd->add_option("--min-p", f->min_p, "min-p (0: off)");
  cmd->add_option("--max-tokens", f->max_tokens, "tokens per completion");
  cmd->add_option("--seed", f->seed, "sample i uses seed + i");
  cmd->add_option("--stop", f->stop, "stop strings");
  cmd->add_option("--shots", f->shots, "in-context examples 0..4")->check(CLI::Range(0, 4));
  cmd->add_flag("--rules", f->rules, "add the benchmark's coding rules to the prompt");
  cmd->add_flag("--explain", f->explain, "allow explanations (no [BEGIN]/[DONE] instruction)");
  cmd->add_flag("--system-in-prompt", f->system_in_prompt,
                "system message in front of the prompt, none sent apart (no system role)");
  cmd->add_option("--prompt-style", f->prompt_style, kPromptStyleHelp);
  cmd->add_option("--k", f->k, "pass@k to report, e.g. 1,5");
  cmd->add_option("--jobs,-j", f->jobs, "sandboxes in parallel")->check(CLI::Range(1, 256));
  AddGradingFlags(cmd, &f->grading);
  AddExecutorFlags(cmd, &f->executor);
  cmd->add_option("--kv-cache", f->kv_cache, "--model: the core's KV cache, f32 (default) | q8_0");
  cmd->add_option("--decode-threads", f->decode_threads, "threads of the decoding core")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--timeout", f->timeout_s, "seconds per request attempt");
  cmd->add_option("--attempts", f->attempts, "attempts per request")->check(CLI::Range(1, 20));
  cmd->add_flag("--no-stream", f->no_stream, "ask for whole responses (no TTFT/ITL)");
  cmd->add_option("--label", f->labels, "KEY=VALUE attached to the run");
  cmd->add_option("--data", f->data, "store directory (default: a temporary one)");
  cmd->add_option("--json", f->json_out, "write the report (with serving metrics) as JSON");
  cmd->callback([f, run] { *run = [f] { return RunRun(*f); }; });
}

}  // namespace evald
