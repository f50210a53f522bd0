#include "evald/runs/dataset_audit.h"

#include <algorithm>

#include "base/thread_annotations.h"
#include "evald/runs/grading_session.h"
#include "evald/runs/grading_settings.h"
#include "harness/failure_category.h"
#include "harness/grader.h"
#include "harness/reference_mutants.h"
#include "harness/testbench_hardening.h"

namespace evald {

namespace {

// A mutant that compiled and ran says something about the testbench; any other letter does not.
bool Ran(char category) {
  return category == category::kPass || category == category::kRuntimeMismatch ||
         category == category::kResetMismatch || category == category::kTimeout;
}

std::string Finding(const Verdict& v) {
  if (!Ran(v.category)) return "invalid";
  switch (v.cross.formal.outcome) {
    case FormalOutcome::kCounterexample:
      return v.passed ? "missed" : "caught";
    case FormalOutcome::kProven:
      return "equivalent";
    case FormalOutcome::kBounded:
      return "bounded";
    default:
      return "unknown";
  }
}

void Count(const std::string& finding, v1::ProblemAudit* p) {
  if (finding == "invalid") p->set_invalid(p->invalid() + 1);
  if (finding == "equivalent") p->set_equivalent(p->equivalent() + 1);
  if (finding == "bounded") p->set_bounded(p->bounded() + 1);
  if (finding == "unknown") p->set_unknown(p->unknown() + 1);
  if (finding == "caught" || finding == "missed") p->set_different(p->different() + 1);
  if (finding == "caught") p->set_caught(p->caught() + 1);
  if (finding == "missed") p->set_missed(p->missed() + 1);
}

std::vector<const Problem*> Chosen(const Dataset& dataset, const AuditOptions& options) {
  std::vector<const Problem*> out;
  for (const auto& p : dataset.problems()) {
    if (options.problems.empty() || std::find(options.problems.begin(), options.problems.end(),
                                              p.name) != options.problems.end())
      out.push_back(&p);
  }
  return out;
}

void Summarize(v1::DatasetAuditReport* report) {
  int mutants = 0, different = 0, missed = 0, weak = 0;
  for (auto& p : *report->mutable_problems()) {
    p.set_missed_share(p.different() > 0 ? static_cast<double>(p.missed()) / p.different() : 0);
    mutants += p.mutants();
    different += p.different();
    missed += p.missed();
    if (p.missed() > 0) ++weak;
  }
  report->set_mutants(mutants);
  report->set_different(different);
  report->set_missed(missed);
  report->set_missed_share(different > 0 ? static_cast<double>(missed) / different : 0);
  report->set_weak_problems(weak);
}

}  // namespace

StatusOr<v1::DatasetAuditReport> AuditDataset(const Dataset& dataset, const AuditOptions& options) {
  v1::GradingSettings settings = options.eval.grading;
  EVALD_RETURN_IF_ERROR(NormalizeGradingSettings(&settings));
  v1::CrossCheckSettings* cross = settings.mutable_cross_checks();
  cross->set_formal(true);
  cross->set_formal_failures(true);
  cross->set_optional(false);
  cross->set_synthesis(false);
  GradingResources resources = options.eval.resources;
  resources.store = nullptr;  // an audit always grades every mutant
  const std::vector<const Problem*> problems = Chosen(dataset, options);
  if (problems.empty()) return Status::InvalidArgument("no such problem in the dataset");
  auto session = GradingSession::Open(settings, resources, dataset, problems);
  if (!session.ok()) return session.status();
  GradingSession& grading = **session;

  v1::DatasetAuditReport report;
  report.set_dataset(dataset.folder());
  report.set_task(std::string(TaskName(dataset.task())));
  report.set_simulator(settings.simulator());
  report.set_simulator_version(grading.simulator_version());
  *report.mutable_cross_checks() = grading.settings().cross_checks();
  Mutex mu;  // callbacks run on sandbox threads while later problems are added
  for (const Problem* p : problems) {
    const auto& cal = grading.calibration_records().at(p->name);
    const std::string design = ReferenceDesign(*p);
    std::vector<Mutant> mutants =
        cal.gradable() ? MutateDesign(design, options.mutants_per_kind) : std::vector<Mutant>{};
    v1::ProblemAudit* audit;
    std::vector<v1::AuditMutant*> entries;
    {
      MutexLock lock(mu);
      audit = report.add_problems();
      audit->set_problem(p->name);
      audit->set_gradable(cal.gradable());
      if (!cal.gradable()) audit->set_note(cal.note());
      audit->set_mutants(static_cast<int>(mutants.size()));
      for (const Mutant& m : mutants) {
        entries.push_back(audit->add_details());
        entries.back()->set_kind(m.kind);
        entries.back()->set_description(m.description);
      }
    }
    if (!cal.gradable()) continue;
    // The reference against itself, as a text of its own (a comment added) so that the formal
    // flow really runs on it rather than the identical-text shortcut.
    grading.Grade(
        *p, design + "\n// evald audit: the reference against itself\n", {"", -1},
        [&mu, audit](GradeOutcome& o) {
          MutexLock lock(mu);
          audit->set_self_check(std::string(FormalOutcomeName(o.verdict.cross.formal.outcome)));
        });
    for (size_t i = 0; i < mutants.size(); ++i) {
      v1::AuditMutant* m = entries[i];
      grading.Grade(*p, std::move(mutants[i].text), {"", static_cast<int>(i)},
                    [&mu, audit, m](GradeOutcome& o) {
                      MutexLock lock(mu);
                      m->set_verdict(std::string(1, o.verdict.category));
                      m->set_formal(std::string(FormalOutcomeName(o.verdict.cross.formal.outcome)));
                      m->set_finding(Finding(o.verdict));
                      m->set_detail(o.verdict.cross.formal.detail.substr(0, 300));
                      Count(m->finding(), audit);
                    });
    }
  }
  grading.Wait();
  Summarize(&report);
  return report;
}

}  // namespace evald
