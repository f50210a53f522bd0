// evald's store: one RocksDB database, a column family per kind of record, protobuf values.
// Writes go through the write-ahead log, so a killed process loses nothing it was told was
// written; related writes (a sample's verdict and its run's progress) go in one atomic batch.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evald/common/status.h"
#include "evald/proto/eval.pb.h"
#include "evald/proto/store.pb.h"

namespace evald::v1 {
class GenerationRecord;
class SamplingParams;
}  // namespace evald::v1

namespace google::protobuf {
class MessageLite;
}

namespace evald {

enum class Family { kCheckpoints, kRuns, kSamples, kVerdictCache, kGenerations };

class Store {
 public:
  static StatusOr<std::unique_ptr<Store>> Open(const std::string& dir);
  ~Store();

  Status Put(Family family, std::string_view key, const google::protobuf::MessageLite& value);
  // NotFound when absent; Corruption when the stored bytes do not parse.
  Status Get(Family family, std::string_view key, google::protobuf::MessageLite* value) const;
  // Visits keys with `prefix` in order until `visit` returns false.
  Status Scan(Family family, std::string_view prefix,
              const std::function<bool(std::string_view key, std::string_view value)>& visit) const;

  // Atomic multi-record writes.
  class Batch {
   public:
    void Put(Family family, std::string_view key, const google::protobuf::MessageLite& value);

   private:
    friend class Store;
    explicit Batch(Store* store) : store_(store) {}
    Store* store_;
    rocksdb::WriteBatch batch_;
  };
  Batch NewBatch() { return Batch(this); }
  Status Write(Batch& batch);

  // Generated samples (see GenerationRecord in store.proto).
  std::optional<v1::GenerationRecord> LookupGeneration(const std::string& key) const;
  Status StoreGeneration(const std::string& key, const v1::GenerationRecord& record);

  // The content-addressed verdict cache.
  std::optional<v1::SampleResult> LookupVerdict(const std::string& key) const;
  Status StoreVerdict(const std::string& key, const v1::SampleResult& result);

 private:
  Store() = default;
  rocksdb::ColumnFamilyHandle* Handle(Family family) const;

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // index = Family
};

// The key of a generated sample: everything that decides it. Field order and encoding are
// fixed (length-prefixed fields, the sampling parameters printed exactly).
std::string GenerationKey(const std::string& checkpoint_id, const std::string& system,
                          const std::string& prompt, const v1::SamplingParams& sampling,
                          int64_t seed, int index);

}  // namespace evald
