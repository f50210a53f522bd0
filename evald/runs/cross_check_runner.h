// Runs a verdict's cross-checks (formal equivalence and synthesis, cross_check_policy.h says
// which) on a sandbox worker, over the text that was compiled for grading, and keeps and
// finds them in the cross-check cache. The reference's own text needs no check (it is the
// reference), and the reference's synthesis is run once per problem per session. What is
// checked is the compiled text: designs whose compiled texts differ only in comments and
// layout (LayoutFreeKey) are one miter, checked once per session and once per store.
#pragma once

#include <map>
#include <string>

#include "base/thread_annotations.h"
#include "datasets/dataset.h"
#include "evald/runs/cross_check_policy.h"
#include "evald/runs/toolchain.h"
#include "evald/runs/verdict_cache.h"
#include "harness/cross_check.h"

namespace evald {

class CrossCheckRunner {
 public:
  CrossCheckRunner(const CrossCheckOptions& options, VerdictCache& cache)
      : options_(options), cache_(cache) {}

  const CrossCheckOptions& options() const { return options_; }
  // No cross-checks after all (they were asked for by default and Yosys does not run).
  void DisableAll() { options_ = CrossCheckOptions{}; }
  // Set once Yosys's version is known (part of every cross-check key).
  void set_yosys_version(std::string v) { yosys_version_ = std::move(v); }
  const std::string& yosys_version() const { return yosys_version_; }

  bool Wanted(const Verdict& v) const { return PlanCrossChecks(options_, v).any(); }
  // The cache's cross-checks for (problem, code) with simulator `sim`; false when absent.
  bool AttachCached(const Problem& problem, const std::string& code, const SimulatorTool& sim,
                    Verdict* v);
  // Runs them on `worker` over `compiled` (the text that was compiled; empty: prepared again)
  // and keeps them in the cache.
  void Run(SandboxWorker& worker, const Problem& problem, const std::string& code,
           const SimulatorTool& sim, std::string compiled, Verdict* v);
  // Keeps cross-checks made elsewhere (a cluster worker) in the cache.
  void Keep(const Problem& problem, const std::string& code, const SimulatorTool& sim,
            const Verdict& v);

  int runs() const { return runs_; }
  // Designs whose checks were those of an earlier one with the same layout-free compiled text.
  int shared_hits() const { return shared_hits_; }

 private:
  std::string KeyFor(const Problem& problem, const std::string& code, const SimulatorTool& sim,
                     const Verdict& v) const;
  void AsTheReference(SandboxWorker& worker, const Problem& problem, const CrossCheckPlan& plan,
                      Verdict* v);
  // The checks of an earlier design with the same layout-free compiled text, if any.
  bool AttachShared(const std::string& key, Verdict* v) EXCLUDES(shared_mu_);
  void KeepShared(const std::string& key, const Verdict& v) EXCLUDES(shared_mu_);
  SynthStats ReferenceSynthesis(SandboxWorker& worker, const Problem& problem)
      EXCLUDES(synthesis_mu_);

  CrossCheckOptions options_;
  VerdictCache& cache_;
  std::string yosys_version_;
  std::atomic<int> runs_{0};
  std::atomic<int> shared_hits_{0};
  Mutex synthesis_mu_;
  std::map<std::string, SynthStats> reference_synthesis_ GUARDED_BY(synthesis_mu_);
  Mutex shared_mu_;
  std::map<std::string, CrossCheck> shared_ GUARDED_BY(shared_mu_);
};

}  // namespace evald
