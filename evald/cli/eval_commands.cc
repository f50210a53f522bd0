#include "evald/cli/eval_commands.h"

#include <google/protobuf/util/json_util.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>

#include "base/thread_annotations.h"
#include "datasets/dataset.h"
#include "datasets/problem_category.h"
#include "datasets/prompt_builder.h"
#include "datasets/task.h"
#include "evald/cli/executor_flags.h"
#include "evald/cli/grading_flags.h"
#include "evald/cli/progress_display.h"
#include "evald/cli/report_io.h"
#include "evald/cluster/slurm_executor.h"
#include "evald/proto/json.h"
#include "evald/runs/dataset_audit.h"
#include "evald/runs/evaluation.h"
#include "evald/runs/grading_session.h"
#include "evald/store/store.h"
#include "evald/text/report_printer.h"

namespace evald {

namespace {

const std::string kTaskHelp =
    TaskChoices() +
    " (default: a VerilogEval v1 checkout is v1-human, an RTLLM checkout rtllm2, else spec-to-rtl)";

const std::string kBenchmarkHelp =
    BenchmarkChoices() + ": the benchmark --dataset holds (its first task unless --task says)";

// What every grading command takes: the dataset, the grading settings and the sandboxes.
struct CommonFlags {
  std::string dataset;
  std::string task;
  std::string benchmark;
  GradingFlagValues grading;
  int jobs = 2;
};

void AddCommon(CLI::App* cmd, CommonFlags* f) {
  cmd->add_option("--dataset", f->dataset,
                  "benchmark checkout (verilog-eval v2, VerilogEval v1, RTLLM) or dataset_* folder")
      ->required();
  cmd->add_option("--task", f->task, kTaskHelp);
  cmd->add_option("--benchmark", f->benchmark, kBenchmarkHelp);
  cmd->add_option("--jobs,-j", f->jobs, "sandboxes running in parallel")->check(CLI::Range(1, 256));
  AddGradingFlags(cmd, &f->grading);
}

// The dataset, with the settings and resources the flags state.
StatusOr<Dataset> LoadFor(const CommonFlags& f, EvalOptions* opts) {
  auto task = TaskForDataset(f.dataset, f.task, f.benchmark);
  if (!task.ok()) return task.status();
  auto grading = GradingSettingsOf(f.grading);
  if (!grading.ok()) return grading.status();
  opts->grading = std::move(*grading);
  opts->resources.jobs = f.jobs;
  return Dataset::Load(f.dataset, *task);
}

struct EvalFlags {
  CommonFlags common;
  std::string samples, json_out, ks = "1,5", data_dir;
  ExecutorFlags executor;
};

int RunEval(const EvalFlags& f) {
  EvalOptions opts;
  auto ds = LoadFor(f.common, &opts);
  if (!ds.ok()) return Fail(ds.status());
  auto ks = ParseKList(f.ks);
  if (!ks.ok()) return Fail(ks.status());
  opts.ks = *ks;
  auto executor = ExecutorOptionsOf(f.executor);
  if (!executor.ok()) return Fail(executor.status());
  opts.resources.remote = ExecutorFactoryFor(*executor);
  opts.progress = MakeProgressDisplay(::isatty(2));
  opts.resources.progress = opts.progress;
  std::unique_ptr<Store> store;
  if (!f.data_dir.empty()) {
    auto opened = Store::Open(f.data_dir);
    if (!opened.ok()) return Fail(opened.status());
    store = std::move(*opened);
    opts.resources.store = store.get();
  }
  auto samples = ReadSamplesJsonl(f.samples);
  if (!samples.ok()) return Fail(samples.status().Annotate("reading samples"));
  for (const auto& e : samples->errors)
    spdlog::warn("{} line {}: {}", f.samples, e.line(), e.message());
  auto report = Evaluate(*ds, *samples, opts);
  if (!report.ok()) return Fail(report.status());
  for (const auto& e : report->input_errors()) {
    if (e.message().rfind("unknown problem", 0) == 0 ||
        e.message().find("already has") != std::string::npos)
      spdlog::warn("{} line {}: {}", f.samples, e.line(), e.message());
  }
  PrintEvalReport(*report, std::cout);
  if (!f.json_out.empty()) {
    if (Status st = WriteJson(*report, f.json_out); !st.ok()) return Fail(st);
  }
  const bool internal = report->summary().categories().count("!") > 0;
  return internal ? 2 : 0;
}

int RunCheck(const CommonFlags& flags, const std::string& json_out) {
  EvalOptions opts;
  auto ds = LoadFor(flags, &opts);
  if (!ds.ok()) return Fail(ds.status());
  auto report = CheckDataset(*ds, opts);
  if (!report.ok()) return Fail(report.status());
  PrintDatasetCheck(*report, std::cout);
  if (!json_out.empty()) {
    if (Status st = WriteJson(*report, json_out); !st.ok()) return Fail(st);
  }
  return 0;
}

struct AuditFlags {
  CommonFlags common;
  std::vector<std::string> problems;
  size_t per_kind = 4;
  std::string json_out;
};

int RunAudit(const AuditFlags& f) {
  AuditOptions opts;
  auto ds = LoadFor(f.common, &opts.eval);
  if (!ds.ok()) return Fail(ds.status());
  opts.problems = f.problems;
  opts.mutants_per_kind = f.per_kind;
  auto report = AuditDataset(*ds, opts);
  if (!report.ok()) return Fail(report.status());
  PrintDatasetAudit(*report, std::cout);
  if (!f.json_out.empty()) {
    if (Status st = WriteJson(*report, f.json_out); !st.ok()) return Fail(st);
  }
  return 0;
}

struct PromptFlags {
  std::string dataset, task, benchmark, problem, style = "benchmark";
  PromptOptions options;
};

int RunPrompts(PromptFlags f) {
  auto style = ParsePromptStyle(f.style);
  if (!style.ok()) return Fail(style.status());
  f.options.style = *style;
  auto task = TaskForDataset(f.dataset, f.task, f.benchmark);
  if (!task.ok()) return Fail(task.status());
  auto ds = Dataset::Load(f.dataset, *task);
  if (!ds.ok()) return Fail(ds.status());
  if (!f.problem.empty() && !ds->Find(f.problem))
    return Fail(Status::NotFound("problem '" + f.problem + "' is not in " + ds->folder()));
  google::protobuf::util::JsonPrintOptions json_opts;
  json_opts.preserve_proto_field_names = true;
  for (const auto& p : ds->problems()) {
    if (!f.problem.empty() && p.name != f.problem) continue;
    auto prompt = BuildPrompt(*ds, p, f.options);
    if (!prompt.ok()) return Fail(prompt.status());
    v1::PromptLine line;
    line.set_problem(p.name);
    line.set_system(prompt->system);
    line.set_prompt(prompt->user);
    std::string out;
    (void)google::protobuf::util::MessageToJsonString(line, &out, json_opts);
    std::cout << out << "\n";
  }
  return 0;
}

// TSV: problem, category (datasets/problem_category.h has the rules).
int RunCategories(const std::string& dataset, const std::string& task_name) {
  auto task = TaskForDataset(dataset, task_name);
  if (!task.ok()) return Fail(task.status());
  auto ds = Dataset::Load(dataset, *task);
  if (!ds.ok()) return Fail(ds.status());
  for (const auto& p : ds->problems()) std::cout << p.name << "\t" << ProblemCategory(p) << "\n";
  return 0;
}

}  // namespace

void RegisterEvalCommand(CLI::App& app, std::function<int()>* run) {
  auto f = std::make_shared<EvalFlags>();
  auto* eval = app.add_subcommand("eval", "grade samples (JSONL) against a dataset");
  AddCommon(eval, &f->common);
  eval->add_option("--samples", f->samples, "samples JSONL (problem + completion or code)")
      ->required();
  eval->add_option("--k", f->ks, "pass@k values, comma separated");
  eval->add_option("--json", f->json_out, "write the full report as JSON");
  eval->add_option("--data", f->data_dir,
                   "evald store (RocksDB): verdicts found there are not simulated again");
  AddExecutorFlags(eval, &f->executor);
  eval->callback([f, run] { *run = [f] { return RunEval(*f); }; });
}

void RegisterDatasetCommands(CLI::App& app, std::function<int()>* run) {
  auto* dataset = app.add_subcommand("dataset", "dataset tools");
  dataset->require_subcommand(1);

  auto check_flags = std::make_shared<CommonFlags>();
  auto check_json = std::make_shared<std::string>();
  auto* check = dataset->add_subcommand("check", "run every reference against its testbench");
  AddCommon(check, check_flags.get());
  check->add_option("--json", *check_json, "write the report as JSON");
  check->callback([=] { *run = [=] { return RunCheck(*check_flags, *check_json); }; });

  auto a = std::make_shared<AuditFlags>();
  auto* audit = dataset->add_subcommand(
      "audit",
      "how good each testbench is: mutants of the reference graded by simulation and formal");
  AddCommon(audit, &a->common);
  audit->add_option("--problems", a->problems, "only these problems")->delimiter(',');
  audit->add_option("--per-kind", a->per_kind, "mutants of each kind per problem")
      ->check(CLI::Range(1, 50));
  audit->add_option("--json", a->json_out, "write the report as JSON");
  audit->callback([=] { *run = [=] { return RunAudit(*a); }; });

  auto p = std::make_shared<PromptFlags>();
  auto* prompts = dataset->add_subcommand(
      "prompts", "print the benchmark's prompts as JSONL (problem, system, prompt)");
  prompts
      ->add_option(
          "--dataset", p->dataset,
          "benchmark checkout (verilog-eval v2, VerilogEval v1, RTLLM) or dataset_* folder")
      ->required();
  prompts->add_option("--task", p->task, kTaskHelp);
  prompts->add_option("--benchmark", p->benchmark, kBenchmarkHelp);
  prompts->add_option("--shots", p->options.shots, "in-context examples (0-4)")
      ->check(CLI::Range(0, 4));
  prompts->add_flag("--rules", p->options.rules, "add the benchmark's rules (spec-to-rtl)");
  prompts->add_flag("--explain", p->options.explain, "allow explanations (no [BEGIN]/[DONE])");
  prompts->add_flag("--system-in-prompt", p->options.system_in_prompt,
                    "put the system message in front of the prompt (models without a system role)");
  prompts->add_option("--prompt-style", p->style, kPromptStyleHelp);
  prompts->add_option("--problem", p->problem, "only this problem");
  prompts->callback([=] { *run = [=] { return RunPrompts(*p); }; });

  auto c = std::make_shared<std::pair<std::string, std::string>>("", "");
  auto* cats = dataset->add_subcommand(
      "categories", "each problem's design category (fsm, sequential, arithmetic, combinational)");
  cats->add_option(
          "--dataset", c->first,
          "benchmark checkout (verilog-eval v2, VerilogEval v1, RTLLM) or dataset_* folder")
      ->required();
  cats->add_option("--task", c->second, kTaskHelp);
  cats->callback([=] { *run = [=] { return RunCategories(c->first, c->second); }; });
}

}  // namespace evald
