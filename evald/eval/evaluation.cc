#include "evald/eval/evaluation.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <set>

#include "base/hash.h"
#include "datasets/code_extractor.h"
#include "evald/eval/sandbox_pool.h"
#include "evald/metrics/bootstrap.h"
#include "evald/metrics/pass_at_k.h"
#include "evald/store/store.h"
#include "harness/calibration.h"
#include "harness/failure_category.h"
#include "harness/testbench_hardening.h"
#include "harness/verdict_key.h"

namespace evald {

namespace {

constexpr size_t kLogTailBytes = 2000;

std::string Tail(const std::string& s) {
  return s.size() <= kLogTailBytes ? s : s.substr(s.size() - kLogTailBytes);
}

}  // namespace

v1::ProblemCalibration CalibrationProto(const std::string& name, const Calibration& c,
                                        char verdict) {
  v1::ProblemCalibration p;
  p.set_problem(name);
  p.set_gradable(c.gradable);
  p.set_samples_checked(c.samples_checked);
  p.set_testbench_timeout(c.testbench_timeout);
  p.set_simulate_seconds(c.simulate_seconds);
  p.set_simulate_cpu_seconds(c.simulate_cpu_seconds);
  p.set_compile_seconds(c.compile_seconds);
  p.set_note(c.note);
  p.set_reference_verdict(std::string(1, verdict));
  return p;
}

Calibration CalibrationFromProto(const v1::ProblemCalibration& p) {
  Calibration c;
  c.gradable = p.gradable();
  c.samples_checked = p.samples_checked();
  c.testbench_timeout = p.testbench_timeout();
  c.simulate_seconds = p.simulate_seconds();
  c.simulate_cpu_seconds = p.simulate_cpu_seconds();
  c.compile_seconds = p.compile_seconds();
  c.note = p.note();
  return c;
}

// The verdict fields of a sample result, as the cache keeps them.
v1::SampleResult VerdictFields(const Verdict& v) {
  v1::SampleResult r;
  r.set_verdict(std::string(1, v.category));
  r.set_passed(v.passed);
  r.set_mismatches(v.mismatches);
  r.set_samples_checked(v.samples_checked);
  r.set_benchmark_verdict(std::string(1, v.benchmark));
  r.set_detail(v.detail);
  r.set_compile_seconds(v.compile_seconds);
  r.set_simulate_seconds(v.simulate_seconds);
  r.set_log_tail(Tail(v.log));
  return r;
}

Verdict FromVerdictFields(const v1::SampleResult& r) {
  Verdict v;
  v.category = r.verdict().empty() ? '!' : r.verdict()[0];
  v.passed = r.passed();
  v.mismatches = r.mismatches();
  v.samples_checked = r.samples_checked();
  v.benchmark = r.benchmark_verdict().empty() ? '?' : r.benchmark_verdict()[0];
  v.detail = r.detail();
  v.compile_seconds = r.compile_seconds();
  v.simulate_seconds = r.simulate_seconds();
  v.log = r.log_tail();
  return v;
}

// Runs the simulator's version query in the sandbox (the same binary that will grade).
std::string SimulatorVersion(SandboxPool& pool, SimulatorKind kind) {
  std::string version;
  pool.Submit([&](SandboxWorker& w) {
    auto r = w.Run(BuildVersionJob(kind), std::chrono::milliseconds(30000));
    if (r.ok() && r->steps_size() > 0) {
      const std::string& out = r->steps(0).output();
      version = out.substr(0, out.find('\n'));
    }
  });
  pool.Wait();
  return version;
}

// Calibrates every problem; `runs` (optional) receives each reference run by problem name.
static std::map<std::string, Calibration> CalibrateAll(SandboxPool& pool, SimulatorKind kind,
                                                       const SimulatorLimits& limits,
                                                       const std::vector<const Problem*>& problems,
                                                       std::map<std::string, char>* verdicts,
                                                       std::map<std::string, DesignRun>* runs) {
  std::map<std::string, Calibration> out;
  std::mutex mu;
  for (const Problem* p : problems) {
    pool.Submit([&, p](SandboxWorker& w) {
      DesignRun run;
      Calibration c = CalibrateProblem(w, kind, limits, *p, &run);
      char letter =
          c.gradable ? '.' : (c.note.find("could not run") != std::string::npos ? '!' : 'X');
      std::lock_guard<std::mutex> lock(mu);
      out[p->name] = c;
      (*verdicts)[p->name] = letter;
      if (runs) (*runs)[p->name] = std::move(run);
    });
  }
  pool.Wait();
  return out;
}

Status CheckSimulatorAllowed(const SandboxPool& pool, SimulatorKind kind) {
  if (kind == SimulatorKind::kVerilator && !pool.layers().ContainsNativeCode())
    return Status::Unavailable(
        "refusing to run Verilator: it executes code from the design ($system, $c, DPI), and this "
        "sandbox lacks layers needed to contain it (" +
        pool.layers().Describe() + ")");
  return Status::Ok();
}

CalibrationSet CalibrateWithCache(SandboxPool& pool, SimulatorKind simulator,
                                  const SimulatorLimits& base, const std::string& version,
                                  const std::vector<const Problem*>& problems, Store* store) {
  CalibrationSet out;
  std::vector<const Problem*> to_calibrate;
  for (const Problem* p : problems) {
    v1::ProblemCalibration cached;
    if (store &&
        store->Get(Family::kVerdictCache, CalibrationKey(simulator, version, base, *p), &cached)
            .ok()) {
      out.calibration[p->name] = CalibrationFromProto(cached);
      out.letters[p->name] =
          cached.reference_verdict().empty() ? '.' : cached.reference_verdict()[0];
    } else {
      to_calibrate.push_back(p);
    }
  }
  for (auto& [name, c] :
       CalibrateAll(pool, simulator, base, to_calibrate, &out.letters, &out.reference_runs))
    out.calibration[name] = c;
  out.simulated = static_cast<int>(to_calibrate.size());
  for (const Problem* p : to_calibrate) {
    if (store && out.letters[p->name] != '!')
      (void)store->Put(Family::kVerdictCache, CalibrationKey(simulator, version, base, *p),
                       CalibrationProto(p->name, out.calibration[p->name], out.letters[p->name]));
  }
  return out;
}

void ComputeMetrics(const std::vector<int>& ks, v1::EvalReport* report) {
  std::map<std::string, v1::ProblemResult> by_problem;
  std::map<std::string, bool> gradable;
  for (const auto& c : report->calibration()) gradable[c.problem()] = c.gradable();
  auto* summary = report->mutable_summary();
  summary->clear_categories();
  for (const auto& s : report->samples()) {
    auto& p = by_problem[s.problem()];
    p.set_problem(s.problem());
    p.set_n(p.n() + 1);
    if (s.passed()) p.set_c(p.c() + 1);
    if (s.benchmark_verdict() == ".") p.set_benchmark_c(p.benchmark_c() + 1);
    (*p.mutable_categories())[s.verdict()]++;
    (*summary->mutable_categories())[s.verdict()]++;
  }
  report->clear_problems();
  std::vector<ProblemCounts> all, graded;
  double bench_rate_sum = 0;
  for (auto& [name, p] : by_problem) {
    auto it = gradable.find(name);
    p.set_gradable(it == gradable.end() || it->second);
    for (const auto& c : report->calibration())
      if (c.problem() == name) p.set_note(c.note());
    for (int k : ks) {
      if (auto v = PassAtK(p.n(), p.c(), k)) (*p.mutable_pass_at())[std::to_string(k)] = *v;
    }
    all.push_back({p.n(), p.c()});
    if (p.gradable()) graded.push_back({p.n(), p.c()});
    // sv-iv-analyze: int((npass/nsamples)*100) per problem, averaged.
    bench_rate_sum += std::floor(static_cast<double>(p.benchmark_c()) / p.n() * 100.0);
    *report->add_problems() = p;
  }
  summary->set_problems(static_cast<int>(by_problem.size()));
  summary->set_samples(report->samples_size());
  summary->set_gradable_problems(static_cast<int>(graded.size()));
  summary->set_benchmark_pass_rate(by_problem.empty() ? 0 : bench_rate_sum / by_problem.size());
  summary->clear_pass_at();
  summary->clear_ci95();
  summary->clear_gradable_pass_at();
  for (int k : ks) {
    std::string key = std::to_string(k);
    std::vector<double> values;
    for (const auto& pc : all)
      if (auto v = PassAtK(pc.n, pc.c, k)) values.push_back(*v);
    if (values.empty()) continue;
    double mean = 0;
    for (double v : values) mean += v;
    mean /= values.size();
    (*summary->mutable_pass_at())[key] = mean;
    Interval ci = BootstrapMeanInterval(values);
    v1::ConfidenceInterval ci_proto;
    ci_proto.set_low(ci.low);
    ci_proto.set_high(ci.high);
    (*summary->mutable_ci95())[key] = ci_proto;
    if (auto g = MeanPassAtK(graded, k)) (*summary->mutable_gradable_pass_at())[key] = *g;
  }
}

StatusOr<v1::EvalReport> Evaluate(const Dataset& dataset, const SamplesFile& samples,
                                  const EvalOptions& options) {
  auto started = std::chrono::steady_clock::now();
  v1::EvalReport report;
  report.set_dataset(dataset.folder());
  report.set_task(std::string(TaskName(dataset.task())));
  report.set_simulator(std::string(SimulatorName(options.simulator)));
  report.set_evald_version(EVALD_VERSION);
  for (int k : options.ks) report.add_k(k);
  for (const auto& e : samples.errors) *report.add_input_errors() = e;

  // 1. Resolve problems, extract code, assign indices, find the distinct simulations.
  struct Pending {
    v1::SampleResult result;
    std::string code;
    std::string key;
  };
  std::vector<Pending> pending;
  std::map<std::string, int> next_index;
  std::set<std::pair<std::string, int>> seen_index;
  std::vector<const Problem*> used_problems;
  std::set<std::string> used_names;
  for (const auto& s : samples.samples) {
    const Problem* problem = dataset.Find(s.problem);
    if (!problem) {
      v1::InputError e;
      e.set_line(s.line);
      e.set_message("unknown problem '" + s.problem + "' (not in " + dataset.folder() + ")");
      *report.add_input_errors() = e;
      continue;
    }
    int index = s.index >= 0 ? s.index : next_index[s.problem];
    if (!seen_index.insert({s.problem, index}).second) {
      v1::InputError e;
      e.set_line(s.line);
      e.set_message("problem '" + s.problem + "' already has a sample with index " +
                    std::to_string(index));
      *report.add_input_errors() = e;
      continue;
    }
    next_index[s.problem] = std::max(next_index[s.problem], index + 1);
    Pending p;
    p.result.set_problem(s.problem);
    p.result.set_index(index);
    p.result.set_line(s.line);
    auto* ext = p.result.mutable_extraction();
    if (s.has_code) {
      p.code = s.text;
      ext->set_method("given");
    } else {
      ExtractedCode code = ExtractCode(dataset.task(), s.text, problem->interface);
      p.code = std::move(code.code);
      ext->set_method(code.method);
      ext->set_interface_prepended(code.interface_prepended);
      for (auto& n : code.notes) ext->add_notes(n);
    }
    p.result.set_code_sha256(Sha256Hex(p.code));
    p.key = Sha256OfFields({SimulatorName(options.simulator), s.problem, p.code});
    if (used_names.insert(s.problem).second) used_problems.push_back(problem);
    pending.push_back(std::move(p));
  }
  const int64_t input_errors = report.input_errors_size() + samples.errors_dropped;
  CapInputErrors(report.mutable_input_errors(), samples.errors_dropped);
  report.mutable_summary()->set_input_errors(static_cast<int32_t>(input_errors));

  // 2. Sandbox workers.
  SandboxPool pool(options.sandbox, options.jobs);
  EVALD_RETURN_IF_ERROR(pool.Start().Annotate("starting the sandbox"));
  report.set_sandbox_layers(pool.layers().Describe());
  spdlog::info("sandbox layers: {}", pool.layers().Describe());
  EVALD_RETURN_IF_ERROR(CheckSimulatorAllowed(pool, options.simulator));
  report.set_simulator_version(SimulatorVersion(pool, options.simulator));
  if (report.simulator_version().empty())
    return Status::Unavailable(std::string(SimulatorName(options.simulator)) +
                               " is not installed or does not run in the sandbox");

  // 3. Calibrate the problems in use.
  const SimulatorLimits base = DefaultLimits(options.simulator);
  SimulatorLimits key_limits = base;
  if (options.simulate_timeout_ms) key_limits.simulate_timeout_ms = *options.simulate_timeout_ms;
  const std::string& version = report.simulator_version();
  CalibrationSet cals =
      CalibrateWithCache(pool, options.simulator, base, version, used_problems, options.store);
  auto& calibration = cals.calibration;
  auto& reference_runs = cals.reference_runs;
  for (const Problem* p : used_problems) {
    auto* c = report.add_calibration();
    *c = CalibrationProto(p->name, calibration[p->name], cals.letters[p->name]);
    c->set_simulate_limit_s(SimulateCpuSeconds(
        LimitsForProblem(base, calibration[p->name], options.simulate_timeout_ms)));
  }

  // 4. One simulation per distinct (problem, code).
  std::map<std::string, size_t> first_of_key;
  std::vector<size_t> unique;
  std::vector<Verdict> verdicts(pending.size());
  std::vector<std::string> cache_keys(pending.size());
  int simulations = cals.simulated, cache_hits = 0;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (!first_of_key.emplace(pending[i].key, i).second) continue;
    const Pending& p = pending[i];
    const Problem* problem = dataset.Find(p.result.problem());
    if (options.store) {
      cache_keys[i] = VerdictKey(options.simulator, version, key_limits, *problem, p.code);
      if (auto hit = options.store->LookupVerdict(cache_keys[i])) {
        verdicts[i] = FromVerdictFields(*hit);
        ++cache_hits;
        continue;
      }
    }
    // A sample that is the reference itself was already simulated by the calibration.
    auto ref_run = reference_runs.find(problem->name);
    if (ref_run != reference_runs.end() && p.code == ReferenceAsDesign(problem->reference)) {
      verdicts[i] =
          ClassifyRun(ref_run->second, options.simulator, p.code, &calibration[problem->name]);
      if (options.store && verdicts[i].cacheable &&
          verdicts[i].category != category::kInternalError)
        (void)options.store->StoreVerdict(cache_keys[i], VerdictFields(verdicts[i]));
      continue;
    }
    unique.push_back(i);
    ++simulations;
  }
  report.mutable_summary()->set_simulations(simulations);
  report.mutable_summary()->set_cache_hits(cache_hits);
  std::atomic<int> done{0};
  const int total = static_cast<int>(unique.size());
  for (size_t i : unique) {
    pool.Submit([&, i](SandboxWorker& w) {
      const Pending& p = pending[i];
      const Problem* problem = dataset.Find(p.result.problem());
      const Calibration& cal = calibration[problem->name];
      SimulatorLimits limits = LimitsForProblem(base, cal, options.simulate_timeout_ms);
      verdicts[i] = GradeDesign(w, options.simulator, limits, *problem, p.code, &cal);
      if (options.store && verdicts[i].cacheable &&
          verdicts[i].category != category::kInternalError)
        (void)options.store->StoreVerdict(cache_keys[i], VerdictFields(verdicts[i]));
      int d = ++done;
      if (options.progress) options.progress(d, total);
    });
  }
  pool.Wait();

  // 5. Results in input order.
  int internal_errors = 0;
  for (size_t i = 0; i < pending.size(); ++i) {
    size_t src = first_of_key[pending[i].key];
    const Verdict& v = verdicts[src];
    v1::SampleResult r = pending[i].result;
    r.MergeFrom(VerdictFields(v));
    r.set_deduplicated(src != i);
    if (v.category == category::kInternalError) ++internal_errors;
    *report.add_samples() = std::move(r);
  }
  if (internal_errors > 0)
    spdlog::error("{} sample(s) could not be run (verdict '!'); see their detail", internal_errors);
  ComputeMetrics(options.ks, &report);
  report.mutable_summary()->set_wall_seconds(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return report;
}

StatusOr<v1::DatasetCheckReport> CheckDataset(const Dataset& dataset, const EvalOptions& options) {
  v1::DatasetCheckReport out;
  out.set_dataset(dataset.folder());
  out.set_task(std::string(TaskName(dataset.task())));
  out.set_simulator(std::string(SimulatorName(options.simulator)));
  SandboxPool pool(options.sandbox, options.jobs);
  EVALD_RETURN_IF_ERROR(pool.Start().Annotate("starting the sandbox"));
  spdlog::info("sandbox layers: {}", pool.layers().Describe());
  EVALD_RETURN_IF_ERROR(CheckSimulatorAllowed(pool, options.simulator));
  out.set_simulator_version(SimulatorVersion(pool, options.simulator));
  if (out.simulator_version().empty())
    return Status::Unavailable(std::string(SimulatorName(options.simulator)) + " is not available");
  std::vector<const Problem*> problems;
  for (const auto& p : dataset.problems()) problems.push_back(&p);
  std::map<std::string, char> verdicts;
  auto cal = CalibrateAll(pool, options.simulator, DefaultLimits(options.simulator), problems,
                          &verdicts, nullptr);
  for (const Problem* p : problems) {
    const Calibration& c = cal[p->name];
    *out.add_problems() = CalibrationProto(p->name, c, verdicts[p->name]);
    if (!c.gradable) {
      out.set_ungradable(out.ungradable() + 1);
    } else {
      out.set_gradable(out.gradable() + 1);
      if (c.testbench_timeout) out.set_special(out.special() + 1);
    }
  }
  return out;
}

}  // namespace evald
