#include "evald/runs/verdict_cache.h"

#include "base/clock.h"
#include "evald/runs/verdict_fields.h"
#include "evald/store/store.h"
#include "harness/failure_category.h"

namespace evald {

std::optional<Verdict> VerdictCache::FindVerdict(const std::string& key) {
  if (!store_) return std::nullopt;
  auto hit = store_->LookupVerdict(key);
  if (!hit) return std::nullopt;
  ++verdict_hits_;
  return VerdictFromProto(*hit);
}

void VerdictCache::KeepVerdict(const std::string& key, const Verdict& v) {
  if (!store_ || key.empty() || !v.cacheable || v.category == category::kInternalError) return;
  (void)store_->StoreVerdict(key, VerdictToProto(v));
}

bool VerdictCache::AttachCrossCheck(const std::string& key, Verdict* v) {
  if (!store_) return false;
  v1::CachedCrossCheck record;
  if (!store_->Get(Family::kCrossChecks, key, &record).ok()) return false;
  v->cross = CrossCheckFromProto(record);
  v->cross_checked = true;
  ++cross_check_hits_;
  return true;
}

void VerdictCache::KeepCrossCheck(const std::string& key, const Verdict& v) {
  if (!store_ || !v.cross.cacheable()) return;
  v1::CachedCrossCheck record = CrossCheckToProto(v.cross);
  record.set_created_unix_ms(UnixMillis());
  (void)store_->Put(Family::kCrossChecks, key, record);
}

std::optional<v1::ProblemCalibration> VerdictCache::FindCalibration(const std::string& key) const {
  v1::ProblemCalibration record;
  if (!store_ || !store_->Get(Family::kCalibrations, key, &record).ok()) return std::nullopt;
  return record;
}

void VerdictCache::KeepCalibration(const std::string& key, const v1::ProblemCalibration& record) {
  if (!store_ || record.reference_verdict() == "!") return;
  (void)store_->Put(Family::kCalibrations, key, record);
}

}  // namespace evald
