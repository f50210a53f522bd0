// The service layer's pure decisions, each tested alone: the grading settings (one form,
// one Normalize, one flag table), the cross-check policy, and what a remote backend does with
// a finished attempt.
#include <gtest/gtest.h>

#include "evald/backends/attempt_outcome.h"
#include "evald/runs/cross_check_policy.h"
#include "evald/runs/grading_settings.h"
#include "harness/failure_category.h"

namespace evald {
namespace {

const GradingFlag& Flag(const std::string& name) {
  for (const GradingFlag& f : GradingFlags())
    if (f.name == name) return f;
  ADD_FAILURE() << "no flag " << name;
  static GradingFlag none;
  return none;
}

TEST(GradingSettings, NormalizeFillsTheDefaultsAndChecksRanges) {
  v1::GradingSettings s;
  ASSERT_TRUE(NormalizeGradingSettings(&s).ok());
  EXPECT_EQ(s.simulator(), "iverilog");
  EXPECT_TRUE(s.cross_checks().formal());
  EXPECT_TRUE(s.cross_checks().optional());  // not asked for: skipped where Yosys cannot run
  EXPECT_GT(s.cross_checks().bound_cycles(), 0);
  EXPECT_GT(s.cross_checks().cpu_seconds(), 0u);
  v1::GradingSettings again = s;  // idempotent
  ASSERT_TRUE(NormalizeGradingSettings(&again).ok());
  EXPECT_EQ(again.SerializeAsString(), s.SerializeAsString());

  v1::GradingSettings bad;
  bad.set_simulator("modelsim");
  EXPECT_FALSE(NormalizeGradingSettings(&bad).ok());
  bad.set_simulator("auto");
  bad.set_simulate_timeout_ms(3600 * 1000 + 1);
  EXPECT_FALSE(NormalizeGradingSettings(&bad).ok());
  bad.set_simulate_timeout_ms(0);
  bad.mutable_cross_checks()->set_bound_cycles(1001);
  EXPECT_FALSE(NormalizeGradingSettings(&bad).ok());
  bad.mutable_cross_checks()->set_bound_cycles(0);
  bad.mutable_cross_checks()->set_cpu_seconds(601);
  EXPECT_FALSE(NormalizeGradingSettings(&bad).ok());
}

TEST(GradingSettings, FormalOffDropsFormalFailures) {
  v1::GradingSettings s;
  s.mutable_cross_checks()->set_formal_failures(true);
  ASSERT_TRUE(NormalizeGradingSettings(&s).ok());
  EXPECT_FALSE(s.cross_checks().formal());
  EXPECT_FALSE(s.cross_checks().formal_failures());
}

TEST(GradingSettings, TheFlagTableWritesTheSettings) {
  v1::GradingSettings s;
  ASSERT_TRUE(Flag("--simulator").apply("verilator", &s).ok());
  ASSERT_TRUE(Flag("--exact-counts").apply("true", &s).ok());
  ASSERT_TRUE(Flag("--sim-timeout").apply("7", &s).ok());
  ASSERT_TRUE(Flag("--require-isolation").apply("true", &s).ok());
  ASSERT_TRUE(Flag("--formal").apply("all", &s).ok());
  ASSERT_TRUE(Flag("--synth").apply("true", &s).ok());
  ASSERT_TRUE(Flag("--formal-bound").apply("12", &s).ok());
  ASSERT_TRUE(Flag("--check-seconds").apply("9", &s).ok());
  ASSERT_TRUE(NormalizeGradingSettings(&s).ok());
  EXPECT_EQ(s.simulator(), "verilator");
  EXPECT_TRUE(s.exact_mismatch_counts());
  EXPECT_EQ(s.simulate_timeout_ms(), 7000u);
  EXPECT_TRUE(s.require_full_isolation());
  EXPECT_TRUE(s.cross_checks().formal());
  EXPECT_TRUE(s.cross_checks().formal_failures());
  EXPECT_TRUE(s.cross_checks().synthesis());
  EXPECT_FALSE(s.cross_checks().optional());  // asked for: no Yosys is an error
  EXPECT_EQ(s.cross_checks().bound_cycles(), 12);
  EXPECT_EQ(s.cross_checks().cpu_seconds(), 9u);
  EXPECT_FALSE(Flag("--sim-timeout").apply("0", &s).ok());
  EXPECT_FALSE(Flag("--sim-timeout").apply("ten", &s).ok());
  EXPECT_FALSE(Flag("--formal").apply("sometimes", &s).ok());
  EXPECT_FALSE(Flag("--formal-bound").apply("1001", &s).ok());
}

TEST(GradingSettings, ADaemonsDefaultsFillOnlyWhatARunLeavesUnset) {
  v1::GradingSettings defaults;
  defaults.set_simulator("verilator");
  defaults.set_exact_mismatch_counts(true);
  defaults.set_simulate_timeout_ms(5000);
  defaults.mutable_cross_checks()->set_formal(false);
  v1::GradingSettings run;
  run.set_simulator("iverilog");
  ApplyGradingDefaults(defaults, &run);
  EXPECT_EQ(run.simulator(), "iverilog");  // stated by the run
  EXPECT_TRUE(run.exact_mismatch_counts());
  EXPECT_EQ(run.simulate_timeout_ms(), 5000u);
  EXPECT_FALSE(run.cross_checks().formal());
  v1::GradingSettings states_checks;
  states_checks.mutable_cross_checks()->set_synthesis(true);
  ApplyGradingDefaults(defaults, &states_checks);
  EXPECT_TRUE(states_checks.cross_checks().synthesis());
}

TEST(GradingSettings, LegacyRunSpecFieldsMoveIntoGrading) {
  v1::RunSpec spec;
  spec.set_simulator("auto");
  spec.set_exact_mismatch_counts(true);
  spec.mutable_cross_checks()->set_synthesis(true);
  MoveLegacyGradingFields(&spec);
  EXPECT_EQ(spec.grading().simulator(), "auto");
  EXPECT_TRUE(spec.grading().exact_mismatch_counts());
  EXPECT_TRUE(spec.grading().cross_checks().synthesis());
  EXPECT_TRUE(spec.simulator().empty());
  EXPECT_FALSE(spec.has_cross_checks());
  v1::RunSpec both;  // the new spelling wins where both are given
  both.set_simulator("verilator");
  both.mutable_grading()->set_simulator("iverilog");
  MoveLegacyGradingFields(&both);
  EXPECT_EQ(both.grading().simulator(), "iverilog");
}

TEST(GradingSettings, CrossCheckOptionsRoundTrip) {
  v1::GradingSettings s;
  ASSERT_TRUE(Flag("--formal").apply("all", &s).ok());
  ASSERT_TRUE(Flag("--synth").apply("true", &s).ok());
  ASSERT_TRUE(NormalizeGradingSettings(&s).ok());
  const CrossCheckOptions o = CrossCheckOptionsFromProto(s.cross_checks());
  EXPECT_TRUE(o.formal && o.formal_failures && o.synthesis && o.required);
  EXPECT_EQ(CrossCheckOptionsToProto(o).SerializeAsString(), s.cross_checks().SerializeAsString());
  auto choice = SimulatorChoiceFromProto(s);
  ASSERT_TRUE(choice.ok());
  EXPECT_FALSE(choice->automatic);
  s.set_simulator("auto");
  EXPECT_TRUE(SimulatorChoiceFromProto(s)->automatic);
  EXPECT_FALSE(FixedSimulateTimeout(s).has_value());
}

Verdict VerdictOf(char category) {
  Verdict v;
  v.category = category;
  v.passed = category == category::kPass;
  return v;
}

TEST(CrossCheckPolicy, FormalOnPassesAndOnRunFailuresWhenAskedSynthesisOnPasses) {
  CrossCheckOptions o;
  o.formal = true;
  EXPECT_TRUE(PlanCrossChecks(o, VerdictOf(category::kPass)).formal);
  EXPECT_FALSE(PlanCrossChecks(o, VerdictOf(category::kRuntimeMismatch)).formal);
  EXPECT_FALSE(PlanCrossChecks(o, VerdictOf(category::kPass)).synthesis);
  o.formal_failures = true;
  EXPECT_TRUE(PlanCrossChecks(o, VerdictOf(category::kRuntimeMismatch)).formal);
  EXPECT_TRUE(PlanCrossChecks(o, VerdictOf(category::kResetMismatch)).formal);
  EXPECT_TRUE(PlanCrossChecks(o, VerdictOf(category::kTimeout)).formal);
  // What did not compile or was refused has nothing for formal to judge.
  EXPECT_FALSE(PlanCrossChecks(o, VerdictOf(category::kSyntax)).formal);
  EXPECT_FALSE(PlanCrossChecks(o, VerdictOf(category::kIntegrity)).formal);
  o.synthesis = true;
  EXPECT_TRUE(PlanCrossChecks(o, VerdictOf(category::kPass)).synthesis);
  EXPECT_FALSE(PlanCrossChecks(o, VerdictOf(category::kRuntimeMismatch)).synthesis);
  CrossCheckOptions none;
  EXPECT_FALSE(PlanCrossChecks(none, VerdictOf(category::kPass)).any());
}

AttemptFacts Transferred(long status) {
  AttemptFacts f;
  f.transferred = true;
  f.http_status = status;
  f.complete = true;
  f.choices = 2;
  f.finished_choices = 2;
  return f;
}

TEST(AttemptOutcome, StatusesAndBodiesAreClassified) {
  EXPECT_EQ(ClassifyAttempt(Transferred(200), 1).result, AttemptResult::kSucceeded);
  for (long s : {429L, 408L, 500L, 503L})
    EXPECT_EQ(ClassifyAttempt(Transferred(s), 1).result, AttemptResult::kRetryable) << s;
  for (long s : {400L, 401L, 404L, 302L}) {
    const AttemptOutcome o = ClassifyAttempt(Transferred(s), 1);
    EXPECT_EQ(o.result, AttemptResult::kFinal) << s;
    EXPECT_NE(o.error.find("HTTP " + std::to_string(s)), std::string::npos) << o.error;
  }
  AttemptFacts truncated = Transferred(200);
  truncated.complete = false;
  EXPECT_NE(ClassifyAttempt(truncated, 1).error.find("truncated"), std::string::npos);
  AttemptFacts unfinished = Transferred(200);
  unfinished.finished_choices = 1;
  unfinished.first_unfinished = 1;
  const AttemptOutcome o = ClassifyAttempt(unfinished, 1);
  EXPECT_EQ(o.result, AttemptResult::kRetryable);
  EXPECT_NE(o.error.find("choice 1 of 2 never finished"), std::string::npos) << o.error;
  AttemptFacts garbled = Transferred(200);
  garbled.body_error = "the response is not an OpenAI completion";
  EXPECT_EQ(ClassifyAttempt(garbled, 1).error, garbled.body_error);
}

TEST(AttemptOutcome, TransportFailuresRetryButAnOversizedResponseDoesNot) {
  AttemptFacts refused;
  refused.connection_failed = true;
  refused.transport_error = "Connection refused";
  EXPECT_EQ(ClassifyAttempt(refused, 1).result, AttemptResult::kRetryable);
  AttemptFacts timed_out = refused;
  timed_out.timed_out = true;
  EXPECT_EQ(ClassifyAttempt(timed_out, 1).error.rfind("timed out: ", 0), 0u);
  AttemptFacts huge;
  huge.too_large = true;
  const AttemptOutcome o = ClassifyAttempt(huge, 1024);
  EXPECT_EQ(o.result, AttemptResult::kFinal);
  EXPECT_NE(o.error.find("exceeds 1024 bytes"), std::string::npos);
}

TEST(RetryPlanner, BacksOffDoublingWithJitterAndHonoursRetryAfter) {
  RetryPolicy p{4, 0.5, 3};
  RetryContext c;
  c.jitter = 1;
  EXPECT_DOUBLE_EQ(PlanRetry(p, c).delay_s, 0.5);
  c.attempts_made = 2;
  EXPECT_DOUBLE_EQ(PlanRetry(p, c).delay_s, 1.0);
  c.attempts_made = 3;
  c.jitter = 0.5;
  EXPECT_DOUBLE_EQ(PlanRetry(p, c).delay_s, 1.0);  // 2 s, halved
  c.retry_after_s = 20;
  EXPECT_DOUBLE_EQ(PlanRetry(p, c).delay_s, 20);  // the server's word, above our cap
  c.retry_after_s = 100000;
  EXPECT_DOUBLE_EQ(PlanRetry(p, c).delay_s, 300);  // but not forever
  EXPECT_EQ(PlanRetry(p, c).action, RetryPlan::Action::kRetryLater);
  c.other_replica_free = true;
  EXPECT_EQ(PlanRetry(p, c).action, RetryPlan::Action::kRetryNow);
  EXPECT_DOUBLE_EQ(PlanRetry(p, c).delay_s, 0);
}

TEST(RetryPlanner, GivesUpWhenFinalOutOfAttemptsOrStopping) {
  RetryPolicy p{3, 0.5, 30};
  RetryContext c;
  c.result = AttemptResult::kFinal;
  EXPECT_EQ(PlanRetry(p, c).action, RetryPlan::Action::kGiveUp);
  c.result = AttemptResult::kRetryable;
  c.attempts_made = 3;
  EXPECT_EQ(PlanRetry(p, c).action, RetryPlan::Action::kGiveUp);
  c.attempts_made = 1;
  c.stopping = true;
  c.other_replica_free = true;
  EXPECT_EQ(PlanRetry(p, c).action, RetryPlan::Action::kGiveUp);
}

}  // namespace
}  // namespace evald
