#include "evald/runs/store_sink.h"

#include <fmt/format.h>

#include "evald/runs/grading_session.h"

namespace evald {

std::string SampleKey(const std::string& run_id, const std::string& problem, int index) {
  return fmt::format("{}/{}/{:08d}", run_id, problem, index);
}

namespace {

// Calibrations of problems graded before a restart are kept; the pending ones refreshed.
void MergeCalibration(const std::map<std::string, v1::ProblemCalibration>& fresh, v1::Run* run) {
  std::map<std::string, v1::ProblemCalibration> calibration;
  for (const auto& c : run->calibration()) calibration[c.problem()] = c;
  for (const auto& [name, c] : fresh) calibration[name] = c;
  run->clear_calibration();
  for (auto& [name, c] : calibration) *run->add_calibration() = c;
}

}  // namespace

Status StoreSink::Opened(const GradingSession& session) {
  MutexLock lock(mu_);
  run_->set_sandbox_layers(session.sandbox_layers());
  run_->set_simulator_version(session.simulator_version());
  *run_->mutable_spec()->mutable_grading() = session.settings();
  MergeCalibration(session.calibration_records(), run_);
  auto batch = store_.NewBatch();
  batch.Put(Family::kRuns, run_->id(), *run_);
  if (!write_(batch)) return Status::Cancelled("stopping");
  return Status::Ok();
}

void StoreSink::Graded(v1::StoredSample* sample, GradeOutcome& outcome) {
  if (outcome.source == VerdictSource::kCache) ++counters_.cache_hits;
  if (outcome.source == VerdictSource::kSimulated) {
    ++counters_.simulations;
    counters_.grading_micros += static_cast<int64_t>(outcome.seconds * 1e6);
  }
  if (outcome.fault) {
    if (outcome.source == VerdictSource::kSimulated) ++counters_.sandbox_failures;
    return;  // left ungraded: a resumed run tries it again
  }
  MutexLock lock(mu_);
  run_->set_samples_done(run_->samples_done() + 1);
  auto batch = store_.NewBatch();
  batch.Put(Family::kSamples, SampleKey(run_->id(), sample->problem(), sample->index()), *sample);
  batch.Put(Family::kRuns, run_->id(), *run_);
  // A refused code keeps its record: it is refused at once wherever it comes back.
  if (outcome.attempt && outcome.attempt->allowed()) guard_.Finish(outcome.key, &batch);
  if (!write_(batch)) return;
  ++counters_.samples_graded;
  if (sample->result().has_formal()) ++formal_;
  if (progress_)
    progress_({RunPhase::kGrading, run_->samples_done(), run_->samples_total(), formal_});
}

void StoreSink::Generated(v1::StoredSample* sample, const v1::GenerationRecord* record,
                          const std::string& record_key) {
  MutexLock lock(mu_);
  run_->set_samples_generated(run_->samples_generated() + 1);
  auto batch = store_.NewBatch();
  batch.Put(Family::kSamples, SampleKey(run_->id(), sample->problem(), sample->index()), *sample);
  if (record != nullptr) batch.Put(Family::kGenerations, record_key, *record);
  batch.Put(Family::kRuns, run_->id(), *run_);
  (void)write_(batch);
  if (progress_) progress_({RunPhase::kSampling, run_->samples_generated(), run_->samples_total()});
}

void StoreSink::Failed(const std::vector<v1::StoredSample*>& samples, bool) {
  MutexLock lock(mu_);
  auto batch = store_.NewBatch();
  for (v1::StoredSample* s : samples)
    batch.Put(Family::kSamples, SampleKey(run_->id(), s->problem(), s->index()), *s);
  run_->set_generation_errors(run_->generation_errors() + static_cast<int>(samples.size()));
  batch.Put(Family::kRuns, run_->id(), *run_);
  (void)write_(batch);
}

void StoreSink::AddFacts(const RunFacts& facts) {
  MutexLock lock(mu_);
  run_->set_sampling_seconds(run_->sampling_seconds() + facts.sampled.seconds);
  run_->set_simulations(run_->simulations() + facts.simulations);
  run_->set_cache_hits(run_->cache_hits() + facts.cache_hits);
  run_->set_grading_seconds(run_->grading_seconds() + facts.wall_seconds);
}

}  // namespace evald
