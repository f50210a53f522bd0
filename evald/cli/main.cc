// evald command line. Subcommands:
//   evald eval           grade a samples JSONL against a verilog-eval dataset
//   evald dataset check  run every reference against its testbench (calibration report)
//   evald run            sample a checkpoint (GGUF, endpoint, recorded), grade, score
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>
#include <mutex>
#include <sstream>

#include <google/protobuf/util/json_util.h>

#include "datasets/dataset.h"
#include "datasets/prompt_builder.h"
#include "evald/cli/compare_and_gate.h"
#include "evald/cli/model_commands.h"
#include "evald/cli/report_io.h"
#include "evald/cli/run_command.h"
#include "evald/cli/serve_command.h"
#include "evald/runs/evaluation.h"
#include "evald/eval/report_printer.h"
#include "evald/store/store.h"

namespace {

using namespace evald;

struct CommonFlags {
  std::string dataset;
  std::string task = "spec-to-rtl";
  std::string simulator = "iverilog";
  int jobs = 2;
  bool require_isolation = false;
};

void AddCommon(CLI::App* cmd, CommonFlags* f) {
  cmd->add_option("--dataset", f->dataset, "verilog-eval checkout or dataset_* folder")->required();
  cmd->add_option("--task", f->task, "spec-to-rtl | code-complete-iccad2023");
  cmd->add_option("--simulator", f->simulator, "iverilog | verilator");
  cmd->add_option("--jobs,-j", f->jobs, "sandboxes running in parallel")->check(CLI::Range(1, 256));
  cmd->add_flag("--require-isolation", f->require_isolation,
                "fail rather than run with a degraded sandbox");
}

// A progress line on a terminal, a log line every ten seconds otherwise.
std::function<void(int, int)> MakeProgress() {
  auto start = std::chrono::steady_clock::now();
  auto last = std::make_shared<std::chrono::steady_clock::time_point>(start);
  auto mu = std::make_shared<std::mutex>();
  bool tty = ::isatty(2);
  return [=](int done, int total) {
    std::lock_guard<std::mutex> lock(*mu);
    auto now = std::chrono::steady_clock::now();
    if (done != total && now - *last < std::chrono::milliseconds(tty ? 200 : 10000)) return;
    *last = now;
    double secs = std::chrono::duration<double>(now - start).count();
    double rate = secs > 0 ? done / secs : 0;
    double eta = rate > 0 ? (total - done) / rate : 0;
    std::string line =
        fmt::format("{}/{} simulations  {:.1f}/s  ETA {:.0f} s", done, total, rate, eta);
    if (tty) {
      std::cerr << "\r" << line << (done == total ? "\n" : "") << std::flush;
    } else {
      spdlog::info("{}", line);
    }
  };
}

int Fail(const Status& st) {
  spdlog::error("{}", st.ToString());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  auto logger = spdlog::stderr_color_mt("evald");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%H:%M:%S] %^%l%$ %v");

  CLI::App app{"evald: trustworthy verdicts for LLM-generated Verilog"};
  app.require_subcommand(1);
  app.set_version_flag("--version", EVALD_VERSION);

  CommonFlags eval_flags;
  std::string samples_path, json_out, ks_text = "1,5";
  uint32_t sim_timeout_s = 0;
  std::string data_dir;
  auto* eval = app.add_subcommand("eval", "grade samples (JSONL) against a dataset");
  AddCommon(eval, &eval_flags);
  eval->add_option("--samples", samples_path, "samples JSONL (problem + completion or code)")
      ->required();
  eval->add_option("--k", ks_text, "pass@k values, comma separated");
  eval->add_option("--json", json_out, "write the full report as JSON");
  eval->add_option("--data", data_dir,
                   "evald store (RocksDB): verdicts found there are not simulated again");
  eval->add_option("--sim-timeout", sim_timeout_s,
                   "fixed simulation limit in seconds (default: derived from the reference)");

  CommonFlags check_flags;
  std::string check_json;
  auto* dataset = app.add_subcommand("dataset", "dataset tools");
  dataset->require_subcommand(1);
  auto* check = dataset->add_subcommand("check", "run every reference against its testbench");
  AddCommon(check, &check_flags);
  check->add_option("--json", check_json, "write the report as JSON");

  std::string prompts_dataset, prompts_task = "spec-to-rtl", prompts_problem;
  PromptOptions prompt_opts;
  auto* prompts = dataset->add_subcommand(
      "prompts", "print the benchmark's prompts as JSONL (problem, system, prompt)");
  prompts->add_option("--dataset", prompts_dataset, "verilog-eval checkout or dataset_* folder")
      ->required();
  prompts->add_option("--task", prompts_task, "spec-to-rtl | code-complete-iccad2023");
  prompts->add_option("--shots", prompt_opts.shots, "in-context examples (0-4)")
      ->check(CLI::Range(0, 4));
  prompts->add_flag("--rules", prompt_opts.rules, "add the benchmark's rules (spec-to-rtl)");
  prompts->add_flag("--explain", prompt_opts.explain, "allow explanations (no [BEGIN]/[DONE])");
  prompts->add_flag("--system-in-prompt", prompt_opts.system_in_prompt,
                    "put the system message in front of the prompt (models without a system role)");
  prompts->add_option("--problem", prompts_problem, "only this problem");

  std::function<int()> run;
  RegisterCompareCommand(app, &run);
  RegisterGateCommand(app, &run);
  RegisterServeCommand(app, &run);
  RegisterRunCommand(app, &run);
  RegisterExportCommand(app, &run);
  RegisterModelCommands(app, &run);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    (void)app.exit(e);  // prints the message and the usage hint
    return 2;           // unusable arguments: 2, as every other usage error
  }
  if (run) return run();

  if (prompts->parsed()) {
    auto task = ParseTask(prompts_task);
    if (!task.ok()) return Fail(task.status());
    auto ds = Dataset::Load(prompts_dataset, *task);
    if (!ds.ok()) return Fail(ds.status());
    if (!prompts_problem.empty() && !ds->Find(prompts_problem))
      return Fail(Status::NotFound("problem '" + prompts_problem + "' is not in " + ds->folder()));
    google::protobuf::util::JsonPrintOptions json_opts;
    json_opts.preserve_proto_field_names = true;
    for (const auto& p : ds->problems()) {
      if (!prompts_problem.empty() && p.name != prompts_problem) continue;
      auto prompt = BuildPrompt(*ds, p, prompt_opts);
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

  auto load = [](const CommonFlags& f, EvalOptions* opts) -> StatusOr<Dataset> {
    auto task = ParseTask(f.task);
    if (!task.ok()) return task.status();
    auto sim = ParseSimulator(f.simulator);
    if (!sim.ok()) return sim.status();
    opts->simulator = *sim;
    opts->jobs = f.jobs;
    opts->sandbox.require_full_isolation = f.require_isolation;
    return Dataset::Load(f.dataset, *task);
  };

  if (eval->parsed()) {
    EvalOptions opts;
    auto ds = load(eval_flags, &opts);
    if (!ds.ok()) return Fail(ds.status());
    auto ks = ParseKList(ks_text);
    if (!ks.ok()) return Fail(ks.status());
    opts.ks = *ks;
    if (sim_timeout_s > 0) opts.simulate_timeout_ms = sim_timeout_s * 1000;
    opts.progress = MakeProgress();
    std::unique_ptr<Store> store;
    if (!data_dir.empty()) {
      auto opened = Store::Open(data_dir);
      if (!opened.ok()) return Fail(opened.status());
      store = std::move(*opened);
      opts.store = store.get();
    }
    auto samples = ReadSamplesJsonl(samples_path);
    if (!samples.ok()) return Fail(samples.status().Annotate("reading samples"));
    for (const auto& e : samples->errors)
      spdlog::warn("{} line {}: {}", samples_path, e.line(), e.message());
    auto report = Evaluate(*ds, *samples, opts);
    if (!report.ok()) return Fail(report.status());
    for (const auto& e : report->input_errors()) {
      if (e.message().rfind("unknown problem", 0) == 0 ||
          e.message().find("already has") != std::string::npos)
        spdlog::warn("{} line {}: {}", samples_path, e.line(), e.message());
    }
    PrintEvalReport(*report, std::cout);
    if (!json_out.empty()) {
      Status st = WriteJson(*report, json_out);
      if (!st.ok()) return Fail(st);
    }
    bool internal = report->summary().categories().count("!") > 0;
    return internal ? 2 : 0;
  }
  if (check->parsed()) {
    EvalOptions opts;
    auto ds = load(check_flags, &opts);
    if (!ds.ok()) return Fail(ds.status());
    auto report = CheckDataset(*ds, opts);
    if (!report.ok()) return Fail(report.status());
    PrintDatasetCheck(*report, std::cout);
    if (!check_json.empty()) {
      Status st = WriteJson(*report, check_json);
      if (!st.ok()) return Fail(st);
    }
    return 0;
  }
  return 0;
}
