#include "evald/cli/cross_check_flags.h"

#include "evald/runs/cross_check_settings.h"

namespace evald {

void AddCrossCheckFlags(CLI::App* cmd, CrossCheckFlags* flags) {
  cmd->add_option("--formal", flags->formal,
                  "formal equivalence with the reference, counterexamples replayed in "
                  "simulation: off | passes (samples that pass simulation) | all (also failures "
                  "that compiled and ran); default: passes, skipped with a warning where Yosys "
                  "cannot run");
  cmd->add_flag("--synth", flags->synthesis,
                "Yosys synthesis statistics of passing samples (cells, area, depth, ratio to the "
                "reference)");
  cmd->add_option("--formal-bound", flags->bound_cycles,
                  "clock cycles a sequential check covers from the testbench's start state")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--check-seconds", flags->cpu_seconds,
                  "CPU seconds for one formal or synthesis check (running out: unknown)")
      ->check(CLI::Range(1, 3600));
}

StatusOr<CrossCheckOptions> CrossCheckOptionsOf(const CrossCheckFlags& flags) {
  CrossCheckOptions o;
  o.synthesis = flags.synthesis;
  EVALD_RETURN_IF_ERROR(ApplyFormalChoice(flags.formal, &o));
  if (flags.synthesis) o.required = true;
  o.formal_options.bound_cycles = flags.bound_cycles;
  o.formal_options.cpu_seconds = flags.cpu_seconds;
  o.synthesis_cpu_seconds = flags.cpu_seconds;
  return o;
}

}  // namespace evald
