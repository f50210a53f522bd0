#include "evald/cli/report_io.h"

#include <google/protobuf/util/json_util.h>

#include "base/file_io.h"
#include "base/numbers.h"

namespace evald {

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

}  // namespace evald
