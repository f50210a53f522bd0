// Reading reports back for the commands that work on them (compare, gate).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "evald/proto/eval.pb.h"

namespace evald {

// "1,5" -> {1, 5}; positive integers only.
StatusOr<std::vector<int>> ParseKList(const std::string& text);

// Reads an `evald eval --json` report.
StatusOr<v1::EvalReport> ReadReportJson(const std::string& path);

}  // namespace evald
