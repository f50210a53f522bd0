#include "evald/server/finished_run_bodies.h"

namespace evald {

std::optional<std::string> FinishedRunBodies::Find(const std::string& id,
                                                   const std::string& record) const {
  MutexLock lock(mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end() || it->second.record != record) return std::nullopt;
  return it->second.body;
}

void FinishedRunBodies::Keep(const std::string& id, std::string record, std::string body) {
  MutexLock lock(mu_);
  auto [it, inserted] = by_id_.insert_or_assign(id, Entry{std::move(record), std::move(body)});
  (void)it;
  if (inserted) order_.push_back(id);
  while (by_id_.size() > kCapacity && !order_.empty()) {
    by_id_.erase(order_.front());
    order_.pop_front();
  }
}

}  // namespace evald
