// The one run pipeline, for `evald eval`, `evald run` and the daemon: a plan's samples are
// sampled where they have no completion yet (sampling_stage.h), graded by one grading session
// (grading_session.h), and handed to a sink as each is done - in memory for `evald eval`
// (memory_sink.h), into the store for `evald run` and the daemon (store_sink.h). What the
// pipeline learned (tools, calibrations, counters) comes back as RunFacts, which the report
// builder (report_builder.h) turns into the same report header everywhere.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "datasets/dataset.h"
#include "evald/backends/sampling_backend.h"
#include "evald/proto/eval.pb.h"
#include "evald/proto/records.pb.h"
#include "evald/runs/grade_outcome.h"
#include "evald/runs/grading_resources.h"
#include "evald/runs/sampling_stage.h"

namespace evald {

class GradingSession;

// Where the pipeline's results go. Generated/Failed come from the sampling stage; Graded once
// per sample, with its verdict already in sample->result() (unless outcome.fault: a sandbox
// fault leaves it ungraded, to be tried again when a run resumes). Calls may come from several
// threads at once.
class RunSink : public SamplingSink {
 public:
  // The session is open (its tools and calibrations known), before anything is graded; an
  // error stops the run there.
  virtual Status Opened(const GradingSession& session) = 0;
  virtual void Graded(v1::StoredSample* sample, GradeOutcome& outcome) = 0;
  void Generated(v1::StoredSample*, const v1::GenerationRecord*, const std::string&) override {}
  void Failed(const std::vector<v1::StoredSample*>&, bool) override {}
};

// Where samples without a completion are sampled from.
struct SamplingSource {
  const v1::RunSpec* spec = nullptr;  // sampling and prompt settings
  const v1::Checkpoint* checkpoint = nullptr;
  SamplingBackend* backend = nullptr;
  SamplingCounters* counters = nullptr;  // optional
};

struct RunPlan {
  const Dataset* dataset = nullptr;
  v1::GradingSettings grading;  // normalised (grading_settings.h)
  std::string run_id;           // named in the crash guard's records ("" outside the daemon)
  // Not graded yet; those with generated() false are sampled first (a source is then needed).
  std::vector<v1::StoredSample*> samples;
  SamplingSource sampling;
};

// What a run learned while it executed.
struct RunFacts {
  v1::GradingSettings grading;  // as it took effect (cross-checks as run, Yosys's version)
  std::string simulator_version, sandbox_layers;
  std::map<std::string, v1::ProblemCalibration> calibrations;
  int simulations = 0;  // calibrations included
  int cache_hits = 0;
  double wall_seconds = 0;  // of the whole pipeline, sampling included
  SamplingResult sampled;
};

// Fails when the run cannot go at all (no sandbox, no simulator, a prompt that cannot be built,
// the sink refusing), else once every sample is answered (or the token stopped the run).
StatusOr<RunFacts> ExecuteRunPlan(const RunPlan& plan, const GradingResources& resources,
                                  RunSink& sink);

}  // namespace evald
