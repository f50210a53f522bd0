// How a verdict and a calibration are written into reports and the verdict cache, and read back.
#pragma once

#include <string>

#include "evald/proto/eval.pb.h"
#include "evald/proto/records.pb.h"
#include "harness/grader.h"

namespace evald {

// The verdict fields of a sample result (what the verdict cache keeps), and back.
v1::SampleResult VerdictFields(const Verdict& v);
Verdict FromVerdictFields(const v1::SampleResult& r);

// The cross-check fields of a sample result: formal, synthesis with its ratios to the
// reference, cross_check, strict_passed.
void SetCrossCheckFields(const Verdict& v, v1::SampleResult* r);
// What the cross-check cache keeps, and back.
v1::CachedCrossCheck CrossCheckRecord(const CrossCheck& c);
CrossCheck CrossCheckFromRecord(const v1::CachedCrossCheck& record);

// A problem's calibration as reports and the cache keep it; `letter` is the reference run's
// category ('.' gradable, 'X' not gradable, '!' could not run).
v1::ProblemCalibration CalibrationProto(const std::string& name, const Calibration& c, char letter);
Calibration CalibrationFromProto(const v1::ProblemCalibration& p);

}  // namespace evald
