#include "evald/cli/report_io.h"

#include "evald/cli/daemon_reports.h"

#include "base/file_io.h"
#include "evald/server/run_records.h"
#include "evald/store/store.h"

#include <google/protobuf/util/json_util.h>
#include <spdlog/spdlog.h>

#include "base/file_io.h"
#include "base/numbers.h"

namespace evald {

int Fail(const Status& st) {
  spdlog::error("{}", st.ToString());
  return 2;
}

StatusOr<std::vector<int>> ParseKList(const std::string& text) {
  std::vector<int> ks;
  size_t start = 0;
  while (true) {
    size_t end = text.find(',', start);
    std::string item =
        text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    auto k = ParseInt(item, 1, 1000000);
    if (!k)
      return Status::InvalidArgument(
          "--k expects integers from 1 to 1000000 separated by commas, got '" + text + "'");
    ks.push_back(static_cast<int>(*k));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return ks;
}

StatusOr<v1::EvalReport> ReadReportJson(const std::string& path) {
  auto text = ReadFileBounded(path);
  if (!text.ok()) return text.status();
  v1::EvalReport report;
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = true;
  auto st = google::protobuf::util::JsonStringToMessage(*text, &report, opts);
  if (!st.ok())
    return Status::Corruption(path + " is not an evald report: " + std::string(st.message()));
  if (report.problems_size() == 0 && report.samples_size() == 0)
    return Status::InvalidArgument(path + " holds no results");
  return report;
}

// A report from a JSON file, or (with a store) the report of a daemon run with that id.
StatusOr<v1::EvalReport> LoadReport(const std::string& what, const ReportSource& source) {
  if (IsRegularFile(what) || (source.data_dir.empty() && source.server.empty()))
    return ReadReportJson(what);
  if (!source.server.empty()) return FetchRunReport(source.server, source.token, what);
  const std::string& data_dir = source.data_dir;
  auto store = Store::OpenForReading(data_dir);  // a running daemon may hold it
  if (!store.ok()) return store.status().Annotate("opening " + data_dir + " to read run " + what);
  RunRecords runs(**store);
  auto run = runs.GetRun(what);
  if (!run.ok()) return run.status();
  if (run->state() != v1::SUCCEEDED)
    return Status::InvalidArgument("run " + what + " has not succeeded (" +
                                   v1::RunState_Name(run->state()) + ")");
  return runs.Report(what);
}

}  // namespace evald
