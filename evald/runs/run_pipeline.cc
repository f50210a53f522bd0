#include "evald/runs/run_pipeline.h"

#include <chrono>
#include <set>

#include "evald/runs/grading_session.h"
#include "evald/runs/verdict_fields.h"
#include "evald/store/store.h"

namespace evald {

namespace {

std::vector<const Problem*> ProblemsOf(const Dataset& dataset,
                                       const std::vector<v1::StoredSample*>& samples) {
  std::set<std::string> names;
  std::vector<const Problem*> problems;
  for (const v1::StoredSample* s : samples)
    if (names.insert(s->problem()).second)
      if (const Problem* p = dataset.Find(s->problem())) problems.push_back(p);
  return problems;
}

// Grades one sample and hands it to the sink with its verdict.
void GradeSample(GradingSession& session, const RunPlan& plan, RunSink& sink,
                 v1::StoredSample* sample) {
  const Problem* problem = plan.dataset->Find(sample->problem());
  if (problem == nullptr) {
    GradeOutcome out = FaultOutcome("", "problem " + sample->problem() + " is not in the dataset");
    sample->mutable_result()->MergeFrom(VerdictToProto(out.verdict));
    return sink.Graded(sample, out);
  }
  session.Grade(*problem, sample->code(), {plan.run_id, sample->index()},
                [&session, &sink, sample, problem](GradeOutcome& outcome) {
                  v1::SampleResult* r = sample->mutable_result();
                  r->MergeFrom(VerdictToProto(outcome.verdict));
                  r->set_simulator(std::string(session.SimulatorFor(*problem)));
                  r->set_deduplicated(outcome.source == VerdictSource::kDuplicate);
                  sample->set_graded(!outcome.fault);
                  sink.Graded(sample, outcome);
                });
}

// The sampling stage's completions go to the run's sink, then to grading.
class GradeWhenGenerated : public SamplingSink {
 public:
  GradeWhenGenerated(GradingSession& session, const RunPlan& plan, RunSink& sink)
      : session_(session), plan_(plan), sink_(sink) {}
  void Generated(v1::StoredSample* sample, const v1::GenerationRecord* record,
                 const std::string& record_key) override {
    sink_.Generated(sample, record, record_key);
    GradeSample(session_, plan_, sink_, sample);
  }
  void Failed(const std::vector<v1::StoredSample*>& samples, bool cancelled) override {
    sink_.Failed(samples, cancelled);
  }

 private:
  GradingSession& session_;
  const RunPlan& plan_;
  RunSink& sink_;
};

StatusOr<SamplingResult> Sample(GradingSession& session, const RunPlan& plan,
                                const GradingResources& resources, RunSink& sink,
                                const std::vector<v1::StoredSample*>& to_generate) {
  const SamplingSource& s = plan.sampling;
  if (s.backend == nullptr || s.spec == nullptr || s.checkpoint == nullptr ||
      resources.store == nullptr)
    return Status::Internal("samples without a completion and nothing to sample them from");
  static const CancelToken kNever;
  const CancelToken& cancel = resources.cancel ? *resources.cancel : kNever;
  SamplingStage stage(*plan.dataset, *s.spec, *s.checkpoint, *s.backend, *resources.store,
                      s.counters);
  GradeWhenGenerated relay(session, plan, sink);
  return stage.Run(to_generate, relay, cancel);
}

}  // namespace

StatusOr<RunFacts> ExecuteRunPlan(const RunPlan& plan, const GradingResources& resources,
                                  RunSink& sink) {
  const auto started = std::chrono::steady_clock::now();
  auto session = GradingSession::Open(plan.grading, resources, *plan.dataset,
                                      ProblemsOf(*plan.dataset, plan.samples));
  if (!session.ok()) return session.status();
  GradingSession& grading = **session;
  EVALD_RETURN_IF_ERROR(sink.Opened(grading));
  std::vector<v1::StoredSample*> to_generate;
  for (v1::StoredSample* s : plan.samples) {
    if (s->generated()) {
      GradeSample(grading, plan, sink, s);
    } else {
      to_generate.push_back(s);
    }
  }
  RunFacts facts;
  if (!to_generate.empty()) {
    auto sampled = Sample(grading, plan, resources, sink, to_generate);
    if (!sampled.ok()) {
      grading.Wait();
      return sampled.status();
    }
    facts.sampled = std::move(*sampled);
  }
  grading.Wait();
  facts.grading = grading.settings();
  facts.simulator_version = grading.simulator_version();
  facts.sandbox_layers = grading.sandbox_layers();
  facts.calibrations = grading.calibration_records();
  facts.simulations = grading.simulations() + grading.calibrations_simulated();
  facts.cache_hits = grading.cache_hits();
  facts.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return facts;
}

}  // namespace evald
