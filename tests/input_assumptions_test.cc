// The reviewed input assumptions: the compiled-in file reads, an entry holds only where its
// problem's text quotes it, and on verilog-eval (when ../shared has it) every entry holds in both
// tasks and none lands on a problem whose text allows every input.
#include <gtest/gtest.h>

#include "datasets/dataset.h"
#include "datasets/input_assumptions.h"
#include "test_support.h"

namespace evald {
namespace {

TEST(InputAssumptions, TheShippedFileReadsAndEveryEntryIsComplete) {
  const auto& shipped = VerilogEvalAssumptions();
  ASSERT_GE(shipped.entries_size(), 4);
  EXPECT_FALSE(shipped.reviewed().empty());
  for (const auto& e : shipped.entries()) {
    EXPECT_FALSE(e.quote().empty()) << e.problem();
    EXPECT_FALSE(e.assume().empty()) << e.problem();
  }
}

TEST(InputAssumptions, BadFilesAreRefused) {
  EXPECT_FALSE(
      ParseInputAssumptions("{\"entries\": [{\"problem\": \"p\", \"assume\": \"a\"}]}").ok());
  EXPECT_FALSE(ParseInputAssumptions("{\"entries\": [], \"surprise\": 1}").ok());
  EXPECT_FALSE(ParseInputAssumptions("not json").ok());
  EXPECT_TRUE(ParseInputAssumptions("{\"entries\": []}").ok());
}

TEST(InputAssumptions, AnEntryHoldsOnlyWhereItsProblemsTextQuotesIt) {
  EXPECT_TRUE(PromptQuotes("it does not\n  matter what", "it does not matter what"));
  EXPECT_FALSE(PromptQuotes("it does matter what", "it does not matter what"));
  EXPECT_FALSE(PromptQuotes("anything", ""));
  datasets::InputAssumptions entries;
  auto* e = entries.add_entries();
  e->set_problem("p");
  e->set_quote("if both control inputs are 1");
  e->set_assume("!(a && b)");
  std::vector<Problem> problems(3);
  problems[0].name = "p";
  problems[0].prompt = "Nothing matters\nif both control\ninputs are 1.";
  problems[1].name = "p";
  problems[1].prompt = "another benchmark's p, which says something else";
  problems[2].name = "q";
  problems[2].prompt = problems[0].prompt;
  ApplyInputAssumptions(entries, &problems);
  EXPECT_EQ(problems[0].assumptions, std::vector<std::string>{"!(a && b)"});
  EXPECT_TRUE(problems[1].assumptions.empty());
  EXPECT_TRUE(problems[2].assumptions.empty());
}

TEST(InputAssumptions, EveryEntryHoldsOnVerilogEvalInBothTasks) {
  if (!testing::HaveSharedVerilogEval()) GTEST_SKIP() << "no ../shared/verilog-eval";
  for (Task task : {Task::kSpecToRtl, Task::kCodeComplete}) {
    auto ds = Dataset::Load(testing::SharedVerilogEval(), task);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    int with = 0;
    for (const auto& p : ds->problems()) with += p.assumptions.empty() ? 0 : 1;
    EXPECT_EQ(with, VerilogEvalAssumptions().entries_size()) << TaskName(task);
    for (const auto& e : VerilogEvalAssumptions().entries()) {
      const Problem* p = ds->Find(e.problem());
      ASSERT_NE(p, nullptr) << e.problem();
      EXPECT_EQ(p->assumptions.size(), 1u) << e.problem() << " " << TaskName(task);
    }
    // Its text says the state may hold several states at once: no one-hot assumption.
    ASSERT_NE(ds->Find("Prob143_fsm_onehot"), nullptr);
    EXPECT_TRUE(ds->Find("Prob143_fsm_onehot")->assumptions.empty());
  }
}

}  // namespace
}  // namespace evald
