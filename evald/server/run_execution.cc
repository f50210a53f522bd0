#include "evald/server/run_execution.h"

#include <fmt/format.h>

#include "evald/runs/verdict_fields.h"

namespace evald {

std::string SampleKey(const std::string& run_id, const std::string& problem, int index) {
  return fmt::format("{}/{}/{:08d}", run_id, problem, index);
}

RunExecution::RunExecution(v1::Run* run, const Dataset& dataset, Store& store,
                           GradingSession& grading, GradingInFlight& guard, RunCounters& counters,
                           Writer write)
    : run_(run),
      dataset_(dataset),
      store_(store),
      grading_(grading),
      guard_(guard),
      counters_(counters),
      write_(std::move(write)) {}

void RunExecution::Grade(v1::StoredSample* sample) {
  const Problem* problem = dataset_.Find(sample->problem());
  grading_.Grade(*problem, sample->code(), {run_->id(), sample->index()},
                 [this, sample](GradeOutcome& outcome) { Graded(sample, outcome); });
}

void RunExecution::Graded(v1::StoredSample* sample, GradeOutcome& outcome) {
  if (outcome.source == VerdictSource::kCache) ++counters_.cache_hits;
  if (outcome.source == VerdictSource::kSimulated) {
    ++counters_.simulations;
    counters_.grading_micros += static_cast<int64_t>(outcome.seconds * 1e6);
  }
  if (outcome.fault) {
    if (outcome.source == VerdictSource::kSimulated) ++counters_.sandbox_failures;
    return;  // left ungraded: a resumed run tries it again
  }
  sample->mutable_result()->MergeFrom(VerdictFields(outcome.verdict));
  sample->mutable_result()->set_simulator(
      std::string(grading_.SimulatorFor(*dataset_.Find(sample->problem()))));
  sample->mutable_result()->set_deduplicated(outcome.source == VerdictSource::kDuplicate);
  sample->set_graded(true);
  std::lock_guard<std::mutex> lock(mu_);
  run_->set_samples_done(run_->samples_done() + 1);
  auto batch = store_.NewBatch();
  batch.Put(Family::kSamples, SampleKey(run_->id(), sample->problem(), sample->index()), *sample);
  batch.Put(Family::kRuns, run_->id(), *run_);
  // A refused code keeps its record: it is refused at once wherever it comes back.
  if (outcome.attempt && outcome.attempt->allowed()) guard_.Finish(outcome.key, &batch);
  if (write_(batch)) ++counters_.samples_graded;
}

void RunExecution::Generated(v1::StoredSample* sample, const v1::GenerationRecord* record,
                             const std::string& record_key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    run_->set_samples_generated(run_->samples_generated() + 1);
    auto batch = store_.NewBatch();
    batch.Put(Family::kSamples, SampleKey(run_->id(), sample->problem(), sample->index()), *sample);
    if (record != nullptr) batch.Put(Family::kGenerations, record_key, *record);
    batch.Put(Family::kRuns, run_->id(), *run_);
    (void)write_(batch);
  }
  Grade(sample);
}

void RunExecution::Failed(const std::vector<v1::StoredSample*>& samples, bool) {
  std::lock_guard<std::mutex> lock(mu_);
  auto batch = store_.NewBatch();
  for (v1::StoredSample* s : samples)
    batch.Put(Family::kSamples, SampleKey(run_->id(), s->problem(), s->index()), *s);
  run_->set_generation_errors(run_->generation_errors() + static_cast<int>(samples.size()));
  batch.Put(Family::kRuns, run_->id(), *run_);
  (void)write_(batch);
}

void RunExecution::AddSamplingSeconds(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  run_->set_sampling_seconds(run_->sampling_seconds() + seconds);
}

}  // namespace evald
