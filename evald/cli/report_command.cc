#include "evald/cli/report_command.h"

#include <google/protobuf/util/json_util.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "base/file_io.h"
#include "datasets/problem_category.h"
#include "datasets/task.h"
#include "evald/cli/report_io.h"
#include "evald/report/train_serve.h"
#include "evald/server/train_serve_runs.h"
#include "evald/store/store.h"

namespace evald {

namespace {

struct ReportFlags {
  std::vector<std::string> inputs;
  std::string data, label, baseline, dataset, task, format = "html", out, title = "train vs serve",
                                                    drift;
};

// Problem categories of a dataset folder (none when it cannot be loaded: "other").
std::map<std::string, std::string> CategoriesOf(const std::string& path, const std::string& task) {
  std::map<std::string, std::string> out;
  auto t = TaskForDataset(path, task);
  if (path.empty() || !t.ok()) return out;
  auto ds = Dataset::Load(path, *t);
  if (!ds.ok()) {
    spdlog::warn("no problem categories: {}", ds.status().ToString());
    return out;
  }
  for (const auto& p : ds->problems()) out[p.name] = std::string(ProblemCategory(p));
  return out;
}

StatusOr<v1::TrainServeReport> FromInputs(const ReportFlags& f) {
  std::vector<ServeRun> runs;
  size_t base = 0;
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    auto report = LoadReport(f.inputs[i], {f.data});
    if (!report.ok()) return report.status();
    ServeRun r;
    r.run = f.inputs[i];
    r.name = IsRegularFile(f.inputs[i]) ? std::filesystem::path(f.inputs[i]).stem().string()
                                        : f.inputs[i];
    r.report = std::move(*report);
    if (f.inputs[i] == f.baseline || std::to_string(i) == f.baseline) base = i;
    runs.push_back(std::move(r));
  }
  const std::string dataset =
      !f.dataset.empty() ? f.dataset : (runs.empty() ? "" : runs[0].report.dataset());
  return BuildTrainServeReport(runs, base, CategoriesOf(dataset, f.task), f.title);
}

StatusOr<v1::TrainServeReport> FromStore(const ReportFlags& f) {
  auto store = Store::OpenForReading(f.data);  // a running daemon may hold it
  if (!store.ok()) return store.status();
  std::map<std::string, std::string> paths;
  if (!f.dataset.empty()) {
    const size_t eq = f.dataset.find('=');
    if (eq == std::string::npos)
      return Status::InvalidArgument("--dataset with --label: NAME=PATH");
    paths[f.dataset.substr(0, eq)] = f.dataset.substr(eq + 1);
  }
  DatasetRegistry datasets(paths);
  RunFilter filter;
  filter.SetLabel(f.label);
  return TrainServeFromStore(RunRecords(**store), datasets, filter, f.baseline, f.title);
}

int RunReport(const ReportFlags& f) {
  if (f.inputs.empty() && (f.label.empty() || f.data.empty()))
    return Fail(
        Status::InvalidArgument("give report files (or run ids with --data), or --data "
                                "with --label KEY=VALUE"));
  auto report = f.inputs.empty() ? FromStore(f) : FromInputs(f);
  if (!report.ok()) return Fail(report.status());
  if (!f.drift.empty()) {
    auto text = ReadFileBounded(f.drift, 64 << 20);
    if (!text.ok()) return Fail(text.status());
    v1::DriftReport drift;
    if (!google::protobuf::util::JsonStringToMessage(*text, &drift).ok())
      return Fail(Status::InvalidArgument(f.drift + " is not an `evald drift --json` report"));
    if (AttachDrift(drift, &*report) == 0)
      spdlog::warn("{}: no variant was served from a file it measured (by path or file name)",
                   f.drift);
  }
  auto text = RenderTrainServeReport(*report, f.format);
  if (!text.ok()) return Fail(text.status());
  if (f.out.empty()) {
    std::cout << *text;
    return 0;
  }
  if (Status st = WriteFileAtomic(f.out, *text); !st.ok()) return Fail(st);
  return 0;
}

}  // namespace

void RegisterReportCommand(CLI::App& app, std::function<int()>* run) {
  auto* report = app.add_subcommand("report", "reports over several runs");
  report->require_subcommand(1);
  auto f = std::make_shared<ReportFlags>();
  auto* cmd = report->add_subcommand(
      "train-serve",
      "one checkpoint evaluated several ways: accuracy with paired deltas against "
      "a baseline, per-category pass@1, serving metrics");
  cmd->add_option("INPUTS", f->inputs, "report JSON files (or run ids with --data)");
  cmd->add_option("--data", f->data,
                  "a store (also while the daemon runs): run ids, or runs by --label");
  cmd->add_option("--label", f->label, "with --data: the runs with this KEY=VALUE label");
  cmd->add_option("--baseline", f->baseline, "the baseline: an input, its index, or a run id");
  cmd->add_option("--dataset", f->dataset,
                  "dataset folder for problem categories (with --label: NAME=PATH)");
  cmd->add_option("--task", f->task,
                  TaskChoices() + " (for categories; default: by the dataset's layout)");
  cmd->add_option("--format", f->format, "html | markdown | json");
  cmd->add_option("--out", f->out, "output file (default: standard output)");
  cmd->add_option("--title", f->title, "the report's title");
  cmd->add_option("--drift", f->drift,
                  "an `evald drift --json` report: each variant served from a file it measured "
                  "shows its drift from the base file beside its pass@k deltas");
  cmd->callback([f, run] { *run = [f] { return RunReport(*f); }; });
}

}  // namespace evald
