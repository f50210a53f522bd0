#include "evald/runs/cross_check_runner.h"

#include "harness/grader.h"
#include "harness/testbench_hardening.h"
#include "harness/verilog_lexer.h"

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
  const std::string reference = ReferenceDesign(problem);
  if (code == reference) return AsTheReference(worker, problem, plan, v);
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
  const std::string layout_free = LayoutFreeKey(compiled);
  if (layout_free == LayoutFreeKey(reference)) return AsTheReference(worker, problem, plan, v);
  // Every distinct design gets its own check and its own budget: none is skipped because another
  // design of the same problem spent its time (a hostile one could otherwise blind the rest).
  // A design whose compiled text has the tokens of one already checked is that same miter.
  const std::string shared = KeyFor(problem, "layout-free:" + layout_free, sim, *v);
  if (AttachShared(shared, v)) {
    ++shared_hits_;
    Keep(problem, code, sim, *v);
    return;
  }
  if (plan.formal)
    v->cross.formal = CheckEquivalence(worker, problem, compiled, options_.formal_options,
                                       DefaultLimits(SimulatorKind::kIcarus));
  if (plan.synthesis) {
    v->cross.synthesis =
        Synthesize(worker, compiled, problem.setup.design_module, options_.synthesis_cpu_seconds);
    v->cross.reference_synthesis = ReferenceSynthesis(worker, problem);
  }
  ++runs_;
  Keep(problem, code, sim, *v);
  KeepShared(shared, *v);
}

void CrossCheckRunner::AsTheReference(SandboxWorker& worker, const Problem& problem,
                                      const CrossCheckPlan& plan, Verdict* v) {
  // The reference's own text (comments and layout aside): equivalent by construction, its
  // figures the reference's.
  if (plan.formal) {
    v->cross.formal.outcome = FormalOutcome::kProven;
    v->cross.formal.mode = "identical";
    v->cross.formal.detail = "the design is the reference's text (comments and layout aside)";
  }
  if (plan.synthesis)
    v->cross.synthesis = v->cross.reference_synthesis = ReferenceSynthesis(worker, problem);
}

bool CrossCheckRunner::AttachShared(const std::string& key, Verdict* v) {
  {
    MutexLock lock(shared_mu_);
    auto it = shared_.find(key);
    if (it != shared_.end()) {
      v->cross = it->second;
      return true;
    }
  }
  return cache_.AttachCrossCheck(key, v);
}

void CrossCheckRunner::KeepShared(const std::string& key, const Verdict& v) {
  if (!v.cross.cacheable()) return;
  cache_.KeepCrossCheck(key, v);
  MutexLock lock(shared_mu_);
  shared_.emplace(key, v.cross);
}

SynthStats CrossCheckRunner::ReferenceSynthesis(SandboxWorker& worker, const Problem& problem) {
  {
    MutexLock lock(synthesis_mu_);
    auto it = reference_synthesis_.find(problem.name);
    if (it != reference_synthesis_.end()) return it->second;
  }
  SynthStats s = Synthesize(worker, ReferenceDesign(problem), problem.setup.design_module,
                            options_.synthesis_cpu_seconds);
  MutexLock lock(synthesis_mu_);
  return reference_synthesis_.emplace(problem.name, std::move(s)).first->second;
}

}  // namespace evald
