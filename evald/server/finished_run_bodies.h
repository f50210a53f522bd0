// The JSON bodies of finished runs, kept so that `GET /v1/runs/{id}` of a run that no longer
// changes does not serialize it again on every request (protobuf's JSON printer is most of that
// request's cost). An entry is valid while the stored record's bytes are the ones it was made
// from: a resumed run (new bytes) gets a new body. Bounded: at most kCapacity entries, the oldest
// dropped first.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>

#include "base/thread_annotations.h"

namespace evald {

class FinishedRunBodies {
 public:
  static constexpr size_t kCapacity = 256;

  // The body made from exactly these record bytes, if kept.
  std::optional<std::string> Find(const std::string& id, const std::string& record) const
      EXCLUDES(mu_);
  void Keep(const std::string& id, std::string record, std::string body) EXCLUDES(mu_);

 private:
  struct Entry {
    std::string record;
    std::string body;
  };
  mutable Mutex mu_;
  std::map<std::string, Entry> by_id_ GUARDED_BY(mu_);
  std::deque<std::string> order_ GUARDED_BY(mu_);  // ids, oldest first
};

}  // namespace evald
