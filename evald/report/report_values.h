// What the train-vs-serve renderings (Markdown and HTML) read out of the report: one list of
// serving figures, pass@k by k, a variant's category.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "evald/proto/compare.pb.h"

namespace evald {

struct ServingFigure {
  const char* label;  // with its unit, e.g. "TTFT median (ms)"
  double (*get)(const v1::ServingMetrics&);
  const char* format;  // fmt format of the value
  // Whether the run measured it: none of a run answered wholly from stored generations (no
  // request was timed), no TTFT or ITL without streaming, no TPOT without a second token.
  bool (*measured)(const v1::ServingMetrics&);
};

const std::vector<ServingFigure>& ServingFigures();

// The figure of a variant, or nothing where the run has no such measurement (shown as "—").
std::optional<double> FigureOf(const ServingFigure& figure, const v1::ServeVariant& variant);

// What a report shows for a figure a run does not have.
inline constexpr const char* kNoValue = "\u2014";

// The value for k in a pass_at-style map; -1 when absent.
double ValueAt(const google::protobuf::Map<std::string, double>& values, int k);

const v1::CategoryAccuracy* FindCategory(const v1::ServeVariant& v, const std::string& name);

}  // namespace evald
