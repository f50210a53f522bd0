#include "datasets/prompt_builder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/file_io.h"
#include "datasets/benchmark_strings.h"
#include "test_support.h"

namespace evald {
namespace {

using evald::testing::BuiltinDataset;
using evald::testing::HaveSharedVerilogEval;
using evald::testing::SharedVerilogEval;

// sv-generate's prompt_rules_suffix, as the script writes it.
const std::string kScriptRulesSuffix =
    "\nHere are some additional rules and coding conventions.\n\n"
    " - Declare all ports and signals as logic; do not to use wire or reg.\n\n"
    " - For combinational logic with an always block do not explicitly specify\n"
    "   the sensitivity list; instead use always @(*).\n\n"
    " - All sized numeric constants must have a size greater than zero\n"
    "   (e.g, 0'b0 is not a valid expression).\n\n"
    " - An always block must read at least one signal otherwise it will never\n"
    "   be executed; use an assign statement instead of an always block in\n"
    "   situations where there is no need to read any signals.\n\n"
    " - if the module uses a synchronous reset signal, this means the reset\n"
    "   signal is sampled with respect to the clock. When implementing a\n"
    "   synchronous reset signal, do not include posedge reset in the\n"
    "   sensitivity list of any sequential always block.\n";

// The spec-to-rtl prompt for a problem whose spec is `spec`, with the built-in strings.
StatusOr<Prompt> SpecPrompt(const std::string& spec, const PromptOptions& options) {
  auto ds = Dataset::Load(BuiltinDataset(), Task::kSpecToRtl);
  if (!ds.ok()) return ds.status();
  Problem p;
  p.prompt = spec;
  return BuildPrompt(*ds, p, options);
}

TEST(Prompt, SpecToRtlZeroShot) {
  auto prompt = SpecPrompt("\n  Build an AND gate.  \n\n", {});
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  EXPECT_EQ(
      prompt->system,
      "\nYou are a Verilog RTL designer that only writes code using correct Verilog syntax.\n");
  EXPECT_EQ(prompt->user,
            "\nQuestion:\nBuild an AND gate.\n\nEnclose your code with [BEGIN] and [DONE]. Only "
            "output the code snippet\nand do NOT output anything else.\n\nAnswer:\n");
}

TEST(Prompt, SpecToRtlRulesAndExplain) {
  auto with_rules = SpecPrompt("Spec.", {.rules = true});
  ASSERT_TRUE(with_rules.ok());
  // rules_suffix ends with "block.\n"; rstrip + "\n" + no-explain suffix follows it.
  EXPECT_NE(with_rules->user.find("sequential always block.\n\nEnclose your code"),
            std::string::npos);
  auto explain = SpecPrompt("Spec.", {.explain = true});
  ASSERT_TRUE(explain.ok());
  EXPECT_EQ(explain->user, "\nQuestion:\nSpec.\n\nAnswer:\n");
}

// The expected text is sv-generate's (c498220) prompt_rules_suffix as the script has it, written
// out here rather than taken from evald's constants: the constant was once wrong and a test that
// compared it with itself could not see it.
TEST(Prompt, RulesSuffixIsTheScriptsByteForByte) {
  auto prompt = SpecPrompt("Build an AND gate.\n", {.rules = true});
  ASSERT_TRUE(prompt.ok());
  EXPECT_EQ(prompt->user, "\nQuestion:\nBuild an AND gate.\n" + kScriptRulesSuffix +
                              "\nEnclose your code with [BEGIN] and [DONE]. Only output the code "
                              "snippet\nand do NOT output anything else.\n\nAnswer:\n");
}

TEST(Prompt, SystemInPromptLeadsTheUserTurn) {
  auto prompt = SpecPrompt("Spec.", {.explain = true, .system_in_prompt = true});
  ASSERT_TRUE(prompt.ok());
  EXPECT_EQ(prompt->user,
            "\nYou are a Verilog RTL designer that only writes code using correct Verilog "
            "syntax.\n\n\nQuestion:\nSpec.\n\nAnswer:\n");
  EXPECT_EQ(prompt->system, BuiltinBenchmarkPrompts().spec_to_rtl().system_msg());
  EXPECT_TRUE(prompt->SystemTurn().empty());  // not sent twice
  auto plain = SpecPrompt("Spec.", {.explain = true});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->SystemTurn(), plain->system);
}

// Python reads the benchmark's files in text mode: a checkout with CRLF (or CR) line endings
// gives the same prompts as one with LF.
TEST(Prompt, CrlfCheckoutGivesTheSamePrompts) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("evald-crlf-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(BuiltinDataset(), dir, fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    auto text = ReadFileBounded(e.path().string());
    ASSERT_TRUE(text.ok());
    std::string crlf;
    bool cr_only = e.path().string().find("_ifc.txt") != std::string::npos;  // old Mac endings
    for (char c : *text)
      crlf += c == '\n' ? std::string(cr_only ? "\r" : "\r\n") : std::string(1, c);
    std::ofstream(e.path(), std::ios::binary) << crlf;
  }
  for (Task task : {Task::kSpecToRtl, Task::kCodeComplete}) {
    auto lf = Dataset::Load(BuiltinDataset(), task);
    auto cr = Dataset::Load(dir.string(), task);
    ASSERT_TRUE(lf.ok() && cr.ok());
    ASSERT_EQ(lf->problems().size(), cr->problems().size());
    for (size_t i = 0; i < lf->problems().size(); ++i) {
      EXPECT_EQ(lf->problems()[i].interface, cr->problems()[i].interface);
      for (bool rules : {false, true}) {
        auto a = BuildPrompt(*lf, lf->problems()[i], {.rules = rules});
        auto b = BuildPrompt(*cr, cr->problems()[i], {.rules = rules});
        ASSERT_TRUE(a.ok() && b.ok());
        EXPECT_EQ(a->user, b->user) << lf->problems()[i].name;
      }
    }
  }
  fs::remove_all(dir);
}

TEST(Prompt, CodeCompleteCommentsTheSpec) {
  auto ds = Dataset::Load(BuiltinDataset(), Task::kCodeComplete);
  ASSERT_TRUE(ds.ok());
  Problem p;
  p.prompt = "Do X.\n\nmodule TopModule (\n  input a\n);\n";
  auto prompt = BuildPrompt(*ds, p, {});
  ASSERT_TRUE(prompt.ok());
  EXPECT_EQ(prompt->user,
            "\n// Implement the Verilog module based on the following description. Assume that "
            "signals are positive clock/clk triggered unless otherwise stated.\n"
            "// Do X.\n// \n\nmodule TopModule (\n  input a\n);");
}

TEST(Prompt, ShotsNeedTheBenchmarkExamples) {
  auto ds = Dataset::Load(BuiltinDataset(), Task::kSpecToRtl);
  ASSERT_TRUE(ds.ok());
  auto r = BuildPrompt(*ds, ds->problems()[0], {.shots = 2});
  EXPECT_FALSE(r.ok());  // the built-in set ships no in-context examples
  EXPECT_FALSE(BuildPrompt(*ds, ds->problems()[0], {.shots = 5}).ok());
}

TEST(Prompt, BuiltinStringsEqualTheBenchmarksPromptsJson) {
  if (!HaveSharedVerilogEval()) GTEST_SKIP() << "no ../shared/verilog-eval";
  auto text = ReadFileBounded(SharedVerilogEval() + "/prompts.json");
  ASSERT_TRUE(text.ok());
  auto parsed = ParseBenchmarkPrompts(*text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->SerializeAsString(), BuiltinBenchmarkPrompts().SerializeAsString());
}

TEST(Prompt, BenchmarkShotsAreByteIdentical) {
  if (!HaveSharedVerilogEval()) GTEST_SKIP() << "no ../shared/verilog-eval";
  for (Task task : {Task::kSpecToRtl, Task::kCodeComplete}) {
    auto ds = Dataset::Load(SharedVerilogEval(), task);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    EXPECT_TRUE(ds->prompts_from_file());
    const Problem* p = ds->Find("Prob001_zero");
    ASSERT_NE(p, nullptr);
    for (int shots = 0; shots <= 4; ++shots) {
      auto prompt = BuildPrompt(*ds, *p, {.shots = shots, .rules = true});
      ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
      std::string expected_prefix;
      if (shots > 0) {
        auto icl = ReadFileBounded(SharedVerilogEval() + "/icl/verilog-example-prefix_" +
                                   std::string(TaskName(task)) + "_" + std::to_string(shots) +
                                   "-shot.txt");
        ASSERT_TRUE(icl.ok());
        expected_prefix = *icl;
      }
      EXPECT_EQ(prompt->user.substr(0, expected_prefix.size()), expected_prefix);
      if (task == Task::kSpecToRtl) {
        EXPECT_EQ(prompt->user.substr(expected_prefix.size()),
                  "\nQuestion:\nI would like you to implement a module named TopModule with the "
                  "following\ninterface. All input and output ports are one bit unless "
                  "otherwise\nspecified.\n\n - output zero\n\nThe module should always outputs a "
                  "LOW.\n" +
                      kScriptRulesSuffix + BuiltinBenchmarkPrompts().no_explain_suffix() +
                      "\nAnswer:\n");
      } else {
        EXPECT_EQ(prompt->user.substr(expected_prefix.size()),
                  BuiltinBenchmarkPrompts().code_complete().prompt_prefix() +
                      "// \n// Build a circuit that always outputs a LOW.\n// \n\nmodule TopModule "
                      "(\n  output zero\n);\n");
      }
    }
  }
}

TEST(Dataset, LoadsBothLayoutsAndRejectsBadOnes) {
  auto a = Dataset::Load(BuiltinDataset(), Task::kSpecToRtl);
  ASSERT_TRUE(a.ok());
  EXPECT_GE(a->problems().size(), 12u);
  auto b =
      Dataset::Load(BuiltinDataset() + "/dataset_code-complete-iccad2023", Task::kCodeComplete);
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->problems()[0].interface.empty());
  EXPECT_FALSE(Dataset::Load("/nonexistent/dir", Task::kSpecToRtl).ok());
  EXPECT_FALSE(IsValidProblemName("../etc/passwd"));
  EXPECT_FALSE(IsValidProblemName(""));
  EXPECT_TRUE(IsValidProblemName("Prob001_zero"));
}

}  // namespace
}  // namespace evald
