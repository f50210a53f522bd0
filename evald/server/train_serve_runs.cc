#include "evald/server/train_serve_runs.h"

#include "datasets/problem_category.h"
#include "evald/leaderboard/leaderboard.h"
#include "evald/report/train_serve.h"

namespace evald {

namespace {

std::string NameOf(const v1::Run& run, const std::map<std::string, v1::Checkpoint>& cks) {
  if (!run.spec().name().empty()) return run.spec().name();
  auto ck = cks.find(run.spec().checkpoint_id());
  const std::string labels = LabelsText(run);
  if (ck != cks.end()) return ck->second.name() + (labels.empty() ? "" : " [" + labels + "]");
  return labels.empty() ? run.id() : labels;
}

}  // namespace

StatusOr<v1::TrainServeReport> TrainServeFromStore(const RunRecords& runs,
                                                   DatasetRegistry& datasets,
                                                   const RunFilter& filter,
                                                   const std::string& baseline,
                                                   const std::string& title) {
  auto listed = runs.ListRuns(filter);
  if (!listed.ok()) return listed.status();
  auto cks = runs.ListCheckpoints();
  if (!cks.ok()) return cks.status();
  std::map<std::string, v1::Checkpoint> by_id;
  for (auto& ck : *cks) by_id[ck.id()] = ck;
  std::vector<ServeRun> selected;
  std::map<std::string, std::string> categories;
  size_t base = 0;
  for (const auto& run : *listed) {
    if (run.state() != v1::SUCCEEDED) continue;
    auto report = runs.Report(run.id());
    if (!report.ok()) return report.status();
    if (run.id() == baseline) base = selected.size();
    ServeRun s;
    s.run = run.id();
    s.name = NameOf(run, by_id);
    s.labels.insert(run.spec().labels().begin(), run.spec().labels().end());
    s.report = std::move(*report);
    selected.push_back(std::move(s));
    auto task = ParseTask(run.spec().task());
    if (!task.ok()) continue;
    auto ds = datasets.Find(run.spec().dataset(), *task);
    if (!ds.ok()) continue;  // the report then counts its problems as "other"
    for (const auto& p : (*ds)->problems()) categories[p.name] = std::string(ProblemCategory(p));
  }
  if (selected.empty()) return Status::NotFound("no finished run matches");
  if (!baseline.empty() && selected[base].run != baseline)
    return Status::InvalidArgument("baseline " + baseline + " is not among the selected runs");
  return BuildTrainServeReport(selected, base, categories, title);
}

}  // namespace evald
