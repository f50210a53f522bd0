// Reports of finished runs read from a running daemon over its REST API (evald compare and
// gate --server URL): what a CI job uses when the store is on another machine.
#pragma once

#include <string>

#include "base/status.h"
#include "evald/proto/eval.pb.h"

namespace evald {

// GET {server}/v1/runs/{id} (it must have SUCCEEDED) and then its report, with `token` as the
// bearer token. Plain http(s), no redirects, bounded size and time; the daemon's error message
// is passed on.
StatusOr<v1::EvalReport> FetchRunReport(const std::string& server, const std::string& token,
                                        const std::string& run_id);

}  // namespace evald
