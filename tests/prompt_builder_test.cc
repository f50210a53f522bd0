#include "datasets/prompt_builder.h"

#include <gtest/gtest.h>

#include "datasets/benchmark_strings.h"
#include "evald/common/file_io.h"
#include "test_support.h"

namespace evald {
namespace {

using evald::testing::BuiltinDataset;
using evald::testing::HaveSharedVerilogEval;
using evald::testing::SharedVerilogEval;

TEST(Prompt, SpecToRtlZeroShot) {
  auto ds = Dataset::Load(BuiltinDataset(), Task::kSpecToRtl);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  Problem p;
  p.prompt = "\n  Build an AND gate.  \n\n";
  auto prompt = BuildPrompt(*ds, p, {});
  ASSERT_TRUE(prompt.ok());
  EXPECT_EQ(
      prompt->system,
      "\nYou are a Verilog RTL designer that only writes code using correct Verilog syntax.\n");
  EXPECT_EQ(prompt->user,
            "\nQuestion:\nBuild an AND gate.\n\nEnclose your code with [BEGIN] and [DONE]. Only "
            "output the code snippet\nand do NOT output anything else.\n\nAnswer:\n");
}

TEST(Prompt, SpecToRtlRulesAndExplain) {
  auto ds = Dataset::Load(BuiltinDataset(), Task::kSpecToRtl);
  ASSERT_TRUE(ds.ok());
  Problem p;
  p.prompt = "Spec.";
  auto with_rules = BuildPrompt(*ds, p, {0, true, false});
  ASSERT_TRUE(with_rules.ok());
  // rules_suffix ends with "block.\n"; rstrip + "\n" + no-explain suffix follows it.
  EXPECT_NE(with_rules->user.find("sequential always block.\n\nEnclose your code"),
            std::string::npos);
  auto explain = BuildPrompt(*ds, p, {0, false, true});
  ASSERT_TRUE(explain.ok());
  EXPECT_EQ(explain->user, "\nQuestion:\nSpec.\n\nAnswer:\n");
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
  auto r = BuildPrompt(*ds, ds->problems()[0], {2, false, false});
  EXPECT_FALSE(r.ok());  // the built-in set ships no in-context examples
  EXPECT_FALSE(BuildPrompt(*ds, ds->problems()[0], {5, false, false}).ok());
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
      auto prompt = BuildPrompt(*ds, *p, {shots, true, false});
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
                      BuiltinBenchmarkPrompts().rules_suffix() +
                      BuiltinBenchmarkPrompts().no_explain_suffix() + "\nAnswer:\n");
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
