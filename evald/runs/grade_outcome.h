// What grading one (problem, code) gives: the verdict, where it came from, and what a daemon
// needs to record it (the verdict key, the crash guard's attempt).
#pragma once

#include <optional>
#include <string>

#include "evald/runs/grading_in_flight.h"
#include "harness/grader.h"

namespace evald {

// Where a verdict came from.
enum class VerdictSource {
  kSimulated,  // this session simulated it (here or on a cluster)
  kReference,  // the code is the reference: classified from the calibration run
  kCache,      // the verdict cache
  kDuplicate,  // the same (problem, code) was graded earlier in this session
  kRefused,    // the crash-loop guard refused to simulate it again ('!', kept for good)
};

struct GradeOutcome {
  Verdict verdict;
  VerdictSource source = VerdictSource::kSimulated;
  std::string key;     // the verdict key (the cache address)
  double seconds = 0;  // wall time of the simulation (kSimulated)
  // '!' from a fault of the sandbox or of evald, not a verdict on the code: a daemon leaves
  // the sample ungraded, to be tried again when the run resumes.
  bool fault = false;
  // Held while the caller records the verdict: the guard's record must leave in the same
  // batch (GradingInFlight::Finish).
  std::optional<GradingInFlight::Attempt> attempt;
};

// Which sample a grading is for (the guard's records name it).
struct SampleRef {
  std::string run_id;
  int index = 0;
};

// A fault outcome: no verdict on the code, never cached.
GradeOutcome FaultOutcome(const std::string& key, const std::string& why);

}  // namespace evald
