// What the commands share: the failure exit, reading reports back (compare, gate, plan, report).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "evald/proto/eval.pb.h"

namespace evald {

// Logs the error and returns 2: what every command exits with when it cannot do its work.
int Fail(const Status& st);

// "1,5" -> {1, 5}; positive integers only.
StatusOr<std::vector<int>> ParseKList(const std::string& text);

// Reads an `evald eval --json` report.
StatusOr<v1::EvalReport> ReadReportJson(const std::string& path);

// Where run ids are read from: a daemon's store (opened for reading, also while the daemon
// runs), or a running daemon's API.
struct ReportSource {
  std::string data_dir;
  std::string server = {};  // base URL of a daemon
  std::string token = {};   // its read token
};

// A report from a JSON file, or the report of a finished daemon run with that id.
StatusOr<v1::EvalReport> LoadReport(const std::string& what, const ReportSource& source);

}  // namespace evald
