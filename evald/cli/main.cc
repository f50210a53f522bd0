// evald command line. Subcommands (one registration per file where they are more than a few
// lines):
//   evald eval             grade a samples JSONL against a verilog-eval dataset (here)
//   evald dataset check    run every reference against its testbench (here)
//   evald dataset prompts  the benchmark's prompts, byte for byte (here)
//   evald run              sample a checkpoint (GGUF, endpoint, recorded), grade, score
//                          (run_command)
//   evald compare, gate    two reports problem by problem; the CI gate (compare_and_gate)
//   evald plan             samples needed for a difference; the smallest detectable one
//                          (plan_command)
//   evald report train-serve  one checkpoint served several ways, side by side (report_command)
//   evald serve, export    the daemon; a leaderboard from a store (serve_command)
//   evald worker           grade one shard of a spool: a cluster's array task (executor_flags)
//   evald generate, quantize, bench decode, make-model
//                          the decoding core on local GGUF files (model_commands)
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <functional>

#include "evald/cli/compare_and_gate.h"
#include "evald/cli/drift_command.h"
#include "evald/cli/eval_commands.h"
#include "evald/cli/executor_flags.h"
#include "evald/cli/model_commands.h"
#include "evald/cli/plan_command.h"
#include "evald/cli/report_command.h"
#include "evald/cli/report_io.h"
#include "evald/cli/run_command.h"
#include "evald/cli/serve_command.h"
#include "kernels/ops/isa.h"

int main(int argc, char** argv) {
  using namespace evald;
  auto logger = spdlog::stderr_color_mt("evald");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%H:%M:%S] %^%l%$ %v");

  CLI::App app{"evald: trustworthy verdicts for LLM-generated Verilog"};
  app.require_subcommand(1);
  app.set_version_flag("--version", EVALD_VERSION);
  // Flags from a TOML file, a section per command ([serve] data = "..."; arrays for repeatable
  // flags); the command line wins. Given after the command too (`evald serve --config F`).
  app.set_config("--config", "", "read flags from a TOML file: a [COMMAND] section of flag names");
  app.fallthrough();

  // Each command's callback leaves what to run here; it runs after the whole line parsed.
  std::function<int()> run;
  RegisterEvalCommand(app, &run);
  RegisterDatasetCommands(app, &run);
  RegisterCompareCommand(app, &run);
  RegisterGateCommand(app, &run);
  RegisterPlanCommand(app, &run);
  RegisterReportCommand(app, &run);
  RegisterServeCommand(app, &run);
  RegisterRunCommand(app, &run);
  RegisterExportCommand(app, &run);
  RegisterOpenApiCommand(app, &run);
  RegisterModelCommands(app, &run);
  RegisterDriftCommand(app, &run);
  RegisterWorkerCommand(app, &run);

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
  // Every command that decodes takes its kernels from DetectIsa: a setting it cannot honour is
  // refused here, once, rather than replaced by another path without a word.
  if (Status st = kernels::CheckIsaOverride(); !st.ok()) return Fail(st);
  return run ? run() : 0;
}
