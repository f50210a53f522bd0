// The caches a grading session reads and fills, typed, over the store (optional: without a
// store nothing is cached): verdicts by verdict key, cross-checks by cross-check key, and
// calibrations by calibration key. What may not be cached is decided here once: a verdict a
// fault produced ('!'), one that depended on something besides the design (Verdict::cacheable),
// a cross-check that ran out of its time or met a sandbox fault, a calibration that could not
// run.
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "evald/proto/eval.pb.h"
#include "harness/grader.h"

namespace evald {

class Store;

class VerdictCache {
 public:
  explicit VerdictCache(Store* store) : store_(store) {}

  std::optional<Verdict> FindVerdict(const std::string& key);
  void KeepVerdict(const std::string& key, const Verdict& verdict);

  // The cached cross-checks of `key` into `verdict` (cross, cross_checked); false when absent.
  bool AttachCrossCheck(const std::string& key, Verdict* verdict);
  void KeepCrossCheck(const std::string& key, const Verdict& verdict);

  std::optional<v1::ProblemCalibration> FindCalibration(const std::string& key) const;
  void KeepCalibration(const std::string& key, const v1::ProblemCalibration& record);

  int verdict_hits() const { return verdict_hits_; }
  int cross_check_hits() const { return cross_check_hits_; }

 private:
  Store* store_;
  std::atomic<int> verdict_hits_{0}, cross_check_hits_{0};
};

}  // namespace evald
