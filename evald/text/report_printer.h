// Human-readable text of evaluation reports, for terminals and logs (the JSON form is
// evald/proto/json.h).
#pragma once

#include <ostream>
#include <string>

#include "base/status.h"
#include "evald/proto/eval.pb.h"

namespace evald {

// The formal and synthesis section of a report (part of PrintEvalReport).
void PrintCrossChecks(const v1::EvalReport& report, std::ostream& out);

void PrintEvalReport(const v1::EvalReport& report, std::ostream& out);
// `evald dataset audit`: per problem the mutants and what the testbench missed.
void PrintDatasetAudit(const v1::DatasetAuditReport& report, std::ostream& out);
// Serving metrics of one run, or of two side by side (A and B columns).
// One weight file's drift from its base (evald drift, a run's RunSpec.drift): overall with
// intervals, per category, the problems that drift most.
void PrintDriftVariant(const v1::DriftVariant& v, std::ostream& out);
void PrintServingMetrics(const v1::ServingMetrics& m, std::ostream& out);
void PrintServingComparison(const v1::ServingMetrics& a, const v1::ServingMetrics& b,
                            std::ostream& out);
void PrintDatasetCheck(const v1::DatasetCheckReport& report, std::ostream& out);

}  // namespace evald
