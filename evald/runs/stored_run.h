// A run kept in the store, driven through the one pipeline: what `evald run` does in its own
// process and what the daemon's queue does for each run it takes. It reads the run's progress
// (what was generated and graded before a stop), builds its backend (a checkpoint that cannot
// be loaded fails the run before any sandbox starts), runs the pipeline into the store
// (store_sink.h), and records serving metrics; Conclude then says how the run ended.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "base/status.h"
#include "datasets/dataset.h"
#include "evald/proto/eval.pb.h"
#include "evald/proto/records.pb.h"
#include "evald/runs/grading_resources.h"
#include "evald/runs/run_counters.h"
#include "evald/runs/run_pipeline.h"
#include "evald/runs/run_sampling.h"
#include "evald/runs/store_sink.h"

namespace evald {

class Store;

struct StoredRunContext {
  Store* store = nullptr;
  const Dataset* dataset = nullptr;
  GradingResources resources;  // its store, guard and cancel token filled by the caller
  BackendOptions backend;      // how backends are built (and what they may reach)
  RunCounters* counters = nullptr;
  StoreSink::Writer write;  // stores a batch, waiting out a full disk; false when stopping
  // (samples graded, samples of the run) after each graded sample; optional.
  ProgressFn progress;  // sampling and grading (calibration: resources.progress)
};

// Executes what the run has left to do; the run record is updated as it goes. Cancelled when
// the process is stopping (the run stays RUNNING and resumes at the next start); another error
// fails the run.
StatusOr<RunFacts> ExecuteStoredRun(v1::Run* run, const StoredRunContext& context);

// How a run that executed to its end ended: SUCCEEDED with its summary and problems, or FAILED
// with what is missing (samples not generated, or not graded) and how to get it.
struct RunEnd {
  v1::RunState state = v1::FAILED;
  std::string reason;
};
RunEnd ConcludeStoredRun(Store& store, v1::Run* run, const RunFacts& facts);

// Execute, then Conclude: how the run ended - CANCELLED when its token was cancelled, FAILED
// with the error that stopped it - or nothing when the token stopped it (the process is
// stopping: the run stays RUNNING, stored as far as it got, and resumes at the next start).
std::optional<RunEnd> DriveStoredRun(v1::Run* run, const StoredRunContext& context);

// Records the end on the run and stores it (through context.write; false: stopped first).
bool FinishStoredRun(v1::Run* run, const RunEnd& end, const StoredRunContext& context);

// The report of a stored run: its graded samples and what it recorded.
StatusOr<v1::EvalReport> StoredRunReport(const Store& store, const v1::Run& run);

}  // namespace evald
