// Reading reports back for the commands that work on them (compare, gate).
#pragma once

#include <string>

#include "evald/common/status.h"
#include "evald/proto/eval.pb.h"

namespace evald {

// Reads an `evald eval --json` report.
StatusOr<v1::EvalReport> ReadReportJson(const std::string& path);

}  // namespace evald
