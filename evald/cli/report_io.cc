#include "evald/cli/report_io.h"

#include <google/protobuf/util/json_util.h>

#include "evald/common/file_io.h"

namespace evald {

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
