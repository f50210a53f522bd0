#include "evald/runs/cross_check_runner.h"

#include "harness/grader.h"
#include "harness/testbench_hardening.h"

namespace evald {

std::string CrossCheckRunner::KeyFor(const Problem& problem, const std::string& code,
                                     const SimulatorTool& sim, const Verdict& v) const {
  const CrossCheckPlan plan = PlanCrossChecks(options_, v);
  return CrossCheckKey(yosys_version_, sim.version, options_, plan.formal, plan.synthesis, problem,
                       code);
}

bool CrossCheckRunner::AttachCached(const Problem& problem, const std::string& code,
                                    const SimulatorTool& sim, Verdict* v) {
  return cache_.AttachCrossCheck(KeyFor(problem, code, sim, *v), v);
}

void CrossCheckRunner::Keep(const Problem& problem, const std::string& code,
                            const SimulatorTool& sim, const Verdict& v) {
  cache_.KeepCrossCheck(KeyFor(problem, code, sim, v), v);
}

void CrossCheckRunner::Run(SandboxWorker& worker, const Problem& problem, const std::string& code,
                           const SimulatorTool& sim, std::string compiled, Verdict* v) {
  const CrossCheckPlan plan = PlanCrossChecks(options_, *v);
  v->cross_checked = true;
  if (code == ReferenceAsDesign(problem.reference)) {
    // The reference's own text: equivalent by construction, its figures the reference's.
    if (plan.formal) {
      v->cross.formal.outcome = FormalOutcome::kProven;
      v->cross.formal.mode = "identical";
      v->cross.formal.detail = "the design is the reference's text";
    }
    if (plan.synthesis)
      v->cross.synthesis = v->cross.reference_synthesis = ReferenceSynthesis(worker, problem);
    return;
  }
  if (compiled.empty()) {
    auto text = CheckedDesignText(worker, sim.kind, sim.base, code);
    if (!text.ok()) {
      v->cross.formal.outcome = FormalOutcome::kUnknown;
      v->cross.formal.detail = "the design could not be prepared: " + text.status().message();
      v->cross.formal.cacheable = false;
      return;
    }
    compiled = std::move(*text);
  }
  // Every distinct design gets its own check and its own budget: none is skipped because another
  // design of the same problem spent its time (a hostile one could otherwise blind the rest).
  if (plan.formal)
    v->cross.formal = CheckEquivalence(worker, problem, compiled, options_.formal_options,
                                       DefaultLimits(SimulatorKind::kIcarus));
  if (plan.synthesis) {
    v->cross.synthesis = Synthesize(worker, compiled, options_.synthesis_cpu_seconds);
    v->cross.reference_synthesis = ReferenceSynthesis(worker, problem);
  }
  ++runs_;
  Keep(problem, code, sim, *v);
}

SynthStats CrossCheckRunner::ReferenceSynthesis(SandboxWorker& worker, const Problem& problem) {
  {
    MutexLock lock(synthesis_mu_);
    auto it = reference_synthesis_.find(problem.name);
    if (it != reference_synthesis_.end()) return it->second;
  }
  SynthStats s =
      Synthesize(worker, ReferenceAsDesign(problem.reference), options_.synthesis_cpu_seconds);
  MutexLock lock(synthesis_mu_);
  return reference_synthesis_.emplace(problem.name, std::move(s)).first->second;
}

}  // namespace evald
