#include "datasets/benchmark_strings.h"

#include <google/protobuf/util/json_util.h>

namespace evald {

const datasets::BenchmarkPrompts& BuiltinBenchmarkPrompts() {
  static const datasets::BenchmarkPrompts* prompts = [] {
    auto* p = new datasets::BenchmarkPrompts();
    p->mutable_code_complete()->set_system_msg(
        "\nYou only complete chats with syntax correct Verilog code. End the Verilog module code "
        "completion with 'endmodule'. Do not include module, input and output definitions.\n");
    p->mutable_code_complete()->set_prompt_prefix(
        "\n// Implement the Verilog module based on the following description. Assume that "
        "signals are positive clock/clk triggered unless otherwise stated.\n");
    p->mutable_spec_to_rtl()->set_system_msg(
        "\nYou are a Verilog RTL designer that only writes code using correct Verilog syntax.\n");
    p->mutable_spec_to_rtl()->set_prompt_prefix("");
    // sv-generate's prompt_rules_suffix: a blank line after the heading and between the rules.
    p->set_rules_suffix(
        "\nHere are some additional rules and coding conventions.\n"
        "\n"
        " - Declare all ports and signals as logic; do not to use wire or reg.\n"
        "\n"
        " - For combinational logic with an always block do not explicitly specify\n"
        "   the sensitivity list; instead use always @(*).\n"
        "\n"
        " - All sized numeric constants must have a size greater than zero\n"
        "   (e.g, 0'b0 is not a valid expression).\n"
        "\n"
        " - An always block must read at least one signal otherwise it will never\n"
        "   be executed; use an assign statement instead of an always block in\n"
        "   situations where there is no need to read any signals.\n"
        "\n"
        " - if the module uses a synchronous reset signal, this means the reset\n"
        "   signal is sampled with respect to the clock. When implementing a\n"
        "   synchronous reset signal, do not include posedge reset in the\n"
        "   sensitivity list of any sequential always block.\n");
    p->set_no_explain_suffix(
        "\nEnclose your code with [BEGIN] and [DONE]. Only output the code snippet\n"
        "and do NOT output anything else.\n");
    auto* d = p->mutable_defaults();
    d->set_temperature_low(0.0);
    d->set_top_p_low(0.01);
    d->set_n_low(1);
    d->set_temperature_high(0.85);
    d->set_top_p_high(0.95);
    d->set_n_high(20);
    d->set_max_tokens(1024);
    return p;
  }();
  return *prompts;
}

StatusOr<datasets::BenchmarkPrompts> ParseBenchmarkPrompts(const std::string& json) {
  datasets::BenchmarkPrompts out;
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = true;
  auto st = google::protobuf::util::JsonStringToMessage(json, &out, opts);
  if (!st.ok()) return Status::Corruption("prompts.json: " + std::string(st.message()));
  if (out.spec_to_rtl().system_msg().empty() || out.no_explain_suffix().empty())
    return Status::Corruption("prompts.json lacks the spec-to-rtl system message or suffixes");
  return out;
}

}  // namespace evald
