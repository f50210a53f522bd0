// How a verdict and a calibration are written into reports and the verdict cache, and read back.
#pragma once

#include <string>

#include "evald/proto/eval.pb.h"
#include "evald/proto/records.pb.h"
#include "harness/grader.h"

namespace evald {

// The verdict fields of a sample result (what the verdict cache keeps), and back.
v1::SampleResult VerdictToProto(const Verdict& v);
Verdict VerdictFromProto(const v1::SampleResult& r);

// The cross-check fields of a sample result whose `passed` is set: formal, synthesis with its
// ratios to the reference, cross_check, strict_passed.
void SetCrossCheckFields(const Verdict& v, v1::SampleResult* r);
// What the cross-check cache keeps, and back.
v1::CachedCrossCheck CrossCheckToProto(const CrossCheck& c);
CrossCheck CrossCheckFromProto(const v1::CachedCrossCheck& record);

// A problem's calibration as reports and the cache keep it (its outcome as the reference run's
// letter: '.' gradable, 'X' not gradable, '!' could not run), and back.
v1::ProblemCalibration CalibrationToProto(const std::string& name, const Calibration& c);
Calibration CalibrationFromProto(const v1::ProblemCalibration& p);

}  // namespace evald
