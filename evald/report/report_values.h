// What the train-vs-serve renderings (Markdown and HTML) read out of the report: one list of
// serving figures, pass@k by k, a variant's category.
#pragma once

#include <string>
#include <vector>

#include "evald/proto/compare.pb.h"

namespace evald {

struct ServingFigure {
  const char* label;  // with its unit, e.g. "TTFT median (ms)"
  double (*get)(const v1::ServingMetrics&);
  const char* format;  // fmt format of the value
};

const std::vector<ServingFigure>& ServingFigures();

// The value for k in a pass_at-style map; -1 when absent.
double ValueAt(const google::protobuf::Map<std::string, double>& values, int k);

const v1::CategoryAccuracy* FindCategory(const v1::ServeVariant& v, const std::string& name);

}  // namespace evald
