#include "evald/runs/calibrations.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "base/thread_annotations.h"
#include "datasets/problem_category.h"
#include "evald/runs/verdict_fields.h"
#include "harness/calibration.h"
#include "harness/verdict_key.h"

namespace evald {

std::vector<const Problem*> Calibrations::Calibrate(const Toolchain& tools, size_t index,
                                                    const std::vector<const Problem*>& problems,
                                                    const Given& given) {
  const SimulatorTool& sim = tools.simulator(index);
  const int simulated_before = simulated_;
  // Given or cached calibrations first; the rest are simulated, their count known up front for
  // the progress display.
  std::vector<std::pair<const Problem*, std::string>> to_simulate;  // with the cache key
  for (const Problem* p : problems) {
    if (auto g = given.find(p->name); g != given.end()) {
      v1::ProblemCalibration record = g->second;
      // --simulator auto: a problem the submitter graded with the other simulator fails here.
      if (record.simulator() != SimulatorName(sim.kind)) {
        record.set_reference_verdict("X");
        record.set_gradable(false);
      }
      calibration_[p->name] = CalibrationFromProto(record);
      records_[p->name] = std::move(record);
      continue;
    }
    std::string key = CalibrationKey(sim.kind, sim.version, sim.base, *p);
    if (auto cached = cache_.FindCalibration(key)) {
      calibration_[p->name] = CalibrationFromProto(*cached);
      records_[p->name] = *cached;
      reference_runs_.erase(p->name);
      continue;
    }
    to_simulate.emplace_back(p, std::move(key));
  }
  Mutex mu;
  int calibrated = 0;  // under mu
  const int total = static_cast<int>(to_simulate.size());
  for (const auto& [p, key] : to_simulate) {
    ++simulated_;
    pool_.Submit([this, &mu, &sim, &calibrated, total, p = p, key = key](SandboxWorker& w) {
      if (stopped()) return;
      DesignRun run;
      Calibration c = CalibrateProblem(w, sim.kind, sim.base, *p, &run);
      if (stopped()) return;  // cut short by the cancel: says nothing about the reference
      v1::ProblemCalibration record = CalibrationToProto(p->name, c);
      cache_.KeepCalibration(key, record);
      MutexLock lock(mu);
      calibration_[p->name] = c;
      records_[p->name] = std::move(record);
      reference_runs_[p->name] = std::move(run);
      if (progress_) progress_({RunPhase::kCalibrating, ++calibrated, total});
    });
  }
  // Say what the first seconds go to: every problem's reference is simulated once before any
  // sample is graded.
  const auto started = std::chrono::steady_clock::now();
  const int simulating = simulated_ - simulated_before;
  if (simulating > 0)
    spdlog::info("calibrating {} problem(s) with {}: each reference simulated once first",
                 simulating, SimulatorName(sim.kind));
  pool_.Wait();
  if (stopped()) return {};
  if (simulating > 0)
    spdlog::info("calibrated {} problem(s) in {:.1f} s", simulating,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  std::vector<const Problem*> failing;
  for (const Problem* p : problems) {
    v1::ProblemCalibration& record = records_[p->name];
    if (record.reference_verdict().empty()) record.set_reference_verdict(".");
    const uint32_t limit_ms =
        LimitsForProblem(sim.base, calibration_[p->name], fixed_timeout_ms_).simulate_timeout_ms;
    record.set_simulate_limit_ms(limit_ms);
    record.set_simulate_limit_s((limit_ms + 999) / 1000);
    record.set_simulator(std::string(SimulatorName(sim.kind)));
    record.set_category(std::string(ProblemCategory(*p)));
    if (index > 0) graded_with_[p->name] = index;
    if (calibration_[p->name].outcome == CalibrationOutcome::kUngradable) failing.push_back(p);
  }
  return failing;
}

void Calibrations::FallBack(const Toolchain& tools, const std::vector<const Problem*>& failing,
                            const Given& given) {
  const std::map<std::string, Calibration> primary = calibration_;
  const std::map<std::string, v1::ProblemCalibration> primary_records = records_;
  const std::vector<const Problem*> still = Calibrate(tools, 1, failing, given);
  const std::string first(SimulatorName(tools.simulator(0).kind));
  const std::string second(SimulatorName(tools.simulator(1).kind));
  for (const Problem* p : failing) {
    if (std::find(still.begin(), still.end(), p) != still.end()) continue;
    v1::ProblemCalibration& r = records_[p->name];
    r.set_note("graded with " + second + ": the reference fails under " + first + " (" +
               primary_records.at(p->name).note() + ")" +
               (r.note().empty() ? "" : "; " + r.note()));
  }
  for (const Problem* p : still) {  // ungradable with both: keep the primary's story
    calibration_[p->name] = primary.at(p->name);
    records_[p->name] = primary_records.at(p->name);
    reference_runs_.erase(p->name);
    graded_with_.erase(p->name);
  }
}

size_t Calibrations::SimulatorOf(const std::string& problem) const {
  auto it = graded_with_.find(problem);
  return it == graded_with_.end() ? 0 : it->second;
}

const DesignRun* Calibrations::ReferenceRun(const std::string& problem) const {
  auto it = reference_runs_.find(problem);
  return it == reference_runs_.end() ? nullptr : &it->second;
}

}  // namespace evald
