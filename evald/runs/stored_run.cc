#include "evald/runs/stored_run.h"

#include <fmt/format.h>

#include "base/clock.h"
#include "evald/metrics/serving_metrics.h"
#include "evald/runs/report_builder.h"
#include "evald/runs/run_drift.h"
#include "evald/store/store.h"

namespace evald {

namespace {

// What a run has left to do; what was done before a restart stays as it is.
struct RunProgress {
  std::vector<v1::StoredSample> pending;   // not graded yet (generated or not)
  std::vector<v1::RequestTiming> timings;  // of every request so far (serving metrics)
  int done = 0, generated = 0, from_generation_cache = 0;
};

StatusOr<RunProgress> ScanProgress(const Store& store, const std::string& run_id, bool sampling) {
  RunProgress out;
  Status st =
      store.Scan(Family::kSamples, run_id + "/", [&](std::string_view, std::string_view value) {
        v1::StoredSample s;
        if (!s.ParseFromArray(value.data(), static_cast<int>(value.size()))) return true;
        if (s.has_request_timing()) out.timings.push_back(s.request_timing());
        if (!sampling || s.generated()) ++out.generated;
        if (s.from_generation_cache()) ++out.from_generation_cache;
        if (s.graded()) {
          ++out.done;
        } else {
          out.pending.push_back(std::move(s));
        }
        return true;
      });
  if (!st.ok()) return st;
  return out;
}

bool Sampling(const v1::Run& run) {
  return !run.spec().backend().empty() && run.spec().backend() != "samples";
}

struct RunBackend {
  v1::Checkpoint checkpoint;
  std::unique_ptr<SamplingBackend> backend;
};

StatusOr<RunBackend> BackendOf(const Store& store, const v1::Run& run,
                               const BackendOptions& options) {
  RunBackend b;
  Status st = store.Get(Family::kCheckpoints, run.spec().checkpoint_id(), &b.checkpoint);
  if (!st.ok())
    return st.code() == Status::Code::kNotFound
               ? Status::NotFound("no checkpoint " + run.spec().checkpoint_id())
               : st;
  auto backend = MakeBackend(b.checkpoint, run.spec(), options);
  if (!backend.ok()) return backend.status();
  b.backend = std::move(*backend);
  return b;
}

// Serving metrics over every request of the run, before and after restarts.
void RecordServing(const SamplingBackend& backend, std::vector<v1::RequestTiming> timings,
                   const SamplingResult& sampled, int cached, v1::Run* run) {
  timings.insert(timings.end(), sampled.timings.begin(), sampled.timings.end());
  v1::ServingMetrics m =
      AggregateServing(timings, sampled.failed_requests, run->sampling_seconds());
  m.set_backend(backend.Kind());
  m.set_endpoint(backend.Describe());
  m.set_prompt_format(backend.PromptFormat());
  m.set_hardware(run->spec().hardware());
  m.set_cached_samples(cached);
  AddPerEndpointServing(timings, &m);
  for (const EndpointHealth& h : backend.Health()) {
    v1::EndpointServing* e = nullptr;
    for (auto& existing : *m.mutable_per_endpoint())
      if (existing.endpoint() == h.endpoint) e = &existing;
    if (e == nullptr) (e = m.add_per_endpoint())->set_endpoint(h.endpoint);
    e->set_failed_attempts(h.failed_attempts);
    e->set_times_taken_out(h.times_taken_out);
  }
  *run->mutable_serving() = m;
}

Status MeasureDrift(v1::Run* run, const StoredRunContext& c) {
  if (c.backend.policy == nullptr) return Status::Internal("no operator policy");
  auto drift = MeasureRunDrift(*c.store, *run, *c.dataset, *c.backend.policy, c.resources.cancel);
  if (!drift.ok()) return drift.status().Annotate("drift");
  *run->mutable_drift() = std::move(*drift);
  return Status::Ok();
}

int CountCachedGenerations(const Store& store, const std::string& run_id) {
  int cached = 0;
  (void)store.Scan(Family::kSamples, run_id + "/", [&](std::string_view, std::string_view value) {
    v1::StoredSample s;
    if (s.ParseFromArray(value.data(), static_cast<int>(value.size())) && s.from_generation_cache())
      ++cached;
    return true;
  });
  return cached;
}

bool Save(const StoredRunContext& c, const v1::Run& run) {
  auto batch = c.store->NewBatch();
  batch.Put(Family::kRuns, run.id(), run);
  return c.write(batch);
}

}  // namespace

StatusOr<RunFacts> ExecuteStoredRun(v1::Run* run, const StoredRunContext& c) {
  const bool sampling = Sampling(*run);
  auto progress = ScanProgress(*c.store, run->id(), sampling);
  if (!progress.ok()) return progress.status();
  run->set_samples_done(progress->done);
  run->set_samples_generated(progress->generated);
  run->set_generation_errors(0);
  run->set_state(v1::RUNNING);
  run->set_state_reason("");
  if (run->started_unix_ms() == 0) run->set_started_unix_ms(UnixMillis());
  if (!Save(c, *run)) return Status::Cancelled("stopping");
  RunBackend backend;
  if (sampling) {
    auto b = BackendOf(*c.store, *run, c.backend);
    if (!b.ok()) return b.status();
    backend = std::move(*b);
  }
  RunPlan plan;
  plan.dataset = c.dataset;
  plan.grading = run->spec().grading();
  plan.run_id = run->id();
  for (auto& s : progress->pending) plan.samples.push_back(&s);
  plan.sampling = {&run->spec(), &backend.checkpoint, backend.backend.get(),
                   c.counters ? &c.counters->sampling : nullptr};
  StoreSink sink(run, *c.store, *c.resources.guard, *c.counters, c.write, c.progress);
  auto facts = ExecuteRunPlan(plan, c.resources, sink);
  if (!facts.ok()) return facts.status();
  sink.AddFacts(*facts);
  if (sampling)
    RecordServing(*backend.backend, progress->timings, facts->sampled,
                  CountCachedGenerations(*c.store, run->id()), run);
  return facts;
}

RunEnd ConcludeStoredRun(Store& store, v1::Run* run, const RunFacts& facts) {
  const std::string& id = run->id();
  if (run->samples_generated() != run->samples_total())
    return {v1::FAILED,
            Status::Unavailable(
                fmt::format("{} of {} samples could not be generated ({} requests failed; "
                            "first: {}); POST /v1/runs/{}/resume asks again for the missing ones",
                            run->samples_total() - run->samples_generated(), run->samples_total(),
                            facts.sampled.failed_requests, facts.sampled.first_error, id))
                .ToString()};
  if (run->samples_done() != run->samples_total())
    return {v1::FAILED,
            Status::Internal(
                fmt::format("{} of {} samples could not be graded (sandbox failures); "
                            "POST /v1/runs/{}/resume (or a daemon restart) grades them",
                            run->samples_total() - run->samples_done(), run->samples_total(), id))
                .ToString()};
  auto report = StoredRunReport(store, *run);
  if (!report.ok()) return {v1::FAILED, report.status().ToString()};
  *run->mutable_summary() = report->summary();
  run->clear_problems();
  for (const auto& p : report->problems()) *run->add_problems() = p;
  return {v1::SUCCEEDED, ""};
}

std::optional<RunEnd> DriveStoredRun(v1::Run* run, const StoredRunContext& c) {
  auto facts = ExecuteStoredRun(run, c);
  const CancelToken* cancel = c.resources.cancel;
  auto interrupted = [&]() -> std::optional<RunEnd> {
    if (cancel != nullptr && cancel->cancelled())
      return RunEnd{v1::CANCELLED, "cancelled while running"};
    return std::nullopt;
  };
  if (auto end = interrupted()) return end;
  if (cancel != nullptr && cancel->stopped()) {
    (void)Save(c, *run);
    return std::nullopt;
  }
  if (!facts.ok()) return RunEnd{v1::FAILED, facts.status().ToString()};
  RunEnd end = ConcludeStoredRun(*c.store, run, *facts);
  if (end.state != v1::SUCCEEDED || !run->spec().has_drift() || run->has_drift()) return end;
  // Measured once every sample is graded; a stop leaves it to the next start.
  Status st = MeasureDrift(run, c);
  if (auto stopped = interrupted()) return stopped;
  if (cancel != nullptr && cancel->stopped()) return std::nullopt;
  if (!st.ok())
    return RunEnd{v1::FAILED, "its samples are graded, but " + st.ToString() + "; POST /v1/runs/" +
                                  run->id() + "/resume measures it again"};
  return end;
}

bool FinishStoredRun(v1::Run* run, const RunEnd& end, const StoredRunContext& c) {
  run->set_state(end.state);
  run->set_state_reason(end.reason);
  run->set_finished_unix_ms(UnixMillis());
  return Save(c, *run);
}

StatusOr<v1::EvalReport> StoredRunReport(const Store& store, const v1::Run& run) {
  std::vector<v1::SampleResult> samples;
  Status st =
      store.Scan(Family::kSamples, run.id() + "/", [&](std::string_view, std::string_view value) {
        v1::StoredSample s;
        if (s.ParseFromArray(value.data(), static_cast<int>(value.size())) && s.graded())
          samples.push_back(s.result());
        return true;
      });
  if (!st.ok()) return st;
  return BuildReport(HeaderOfRun(run), std::move(samples));
}

}  // namespace evald
