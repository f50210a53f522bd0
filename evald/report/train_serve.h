// The train-vs-serve report: runs of one checkpoint served different ways, side by side -
// pass@1 / pass@5 with intervals and paired deltas against a chosen baseline, per-category
// accuracy, serving metrics (TTFT, TPOT, ITL, P99, throughput) - as JSON (the proto), Markdown,
// and one self-contained HTML page whose plots are inline SVG (nothing fetched, no script).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "evald/proto/compare.pb.h"
#include "evald/proto/eval.pb.h"

namespace evald {

struct ServeRun {
  std::string run;   // id or file
  std::string name;  // what the report calls it
  std::map<std::string, std::string> labels;
  v1::EvalReport report;  // problems (n, c, pass@k), summary, serving
};

// `categories`: problem name -> category (problems without one count as "other").
// `baseline`: index into runs. Fails on no run or a bad index.
StatusOr<v1::TrainServeReport> BuildTrainServeReport(
    const std::vector<ServeRun>& runs, size_t baseline,
    const std::map<std::string, std::string>& categories, const std::string& title);

// Gives each variant served from a file the drift report measured (matched by path, or by file
// name) its drift figures; the base file's own variant gets zero drift. Returns how many variants
// were matched.
int AttachDrift(const v1::DriftReport& drift, v1::TrainServeReport* report);

// Gives each variant whose run measured its own drift (RunSpec.drift: the run's report carries
// it) those figures, when measured from the same base file as the first such run; the base
// file's own run gets zero drift. BuildTrainServeReport calls it. Returns how many were matched.
int AttachRunDrift(const std::vector<ServeRun>& runs, v1::TrainServeReport* report);

// format: json | markdown (md) | html
StatusOr<std::string> RenderTrainServeReport(const v1::TrainServeReport& report,
                                             std::string_view format);

}  // namespace evald
