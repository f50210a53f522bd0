// evald's store: one RocksDB database, a column family per kind of record, protobuf values.
// Writes go through the write-ahead log, so a killed process loses nothing it was told was
// written; related writes (a sample's verdict and its run's progress) go in one atomic batch.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "evald/proto/eval.pb.h"
#include "evald/proto/records.pb.h"

namespace evald::v1 {
class GenerationRecord;
class SamplingParams;
}  // namespace evald::v1

namespace google::protobuf {
class MessageLite;
}

// RocksDB stays behind the implementation: its headers are included by store.cc only.
namespace rocksdb {
class DB;
class WriteBatch;
class ColumnFamilyHandle;
}  // namespace rocksdb

namespace evald {

// One record type per family. kVerdictCache: CachedVerdict by verdict key; kCalibrations:
// ProblemCalibration by calibration key; kInFlight: what the daemon is grading right now
// (GradingInFlight, keyed by verdict key), so that a design which kills the process is not tried
// for ever after restarts.
enum class Family {
  kCheckpoints,
  kRuns,
  kSamples,
  kVerdictCache,
  kGenerations,
  kInFlight,
  kCalibrations,
  kCrossChecks,  // CachedCrossCheck by cross-check key (formal and synthesis results)
  kToolVersions  // ToolVersion by the identity of a tool's files (tool_version.h)
};

class Store {
 public:
  static StatusOr<std::unique_ptr<Store>> Open(const std::string& dir);
  // For reading only, also while a daemon holds the store: a RocksDB secondary instance (its
  // own scratch folder, removed with it) that has caught up with what the daemon wrote. Every
  // write is refused (Unavailable). NotFound when there is no store at `dir`.
  static StatusOr<std::unique_ptr<Store>> OpenForReading(const std::string& dir);

  // Writes are refused (Status::NoSpace) while the store's filesystem has less than this free,
  // before RocksDB could meet a full disk (default 64 MiB).
  void set_min_free_bytes(uint64_t bytes) { min_free_bytes_ = bytes; }
  // NoSpace when under the floor; IoError when the filesystem cannot be asked.
  Status CheckFreeSpace() const;
  ~Store();

  Status Put(Family family, std::string_view key, const google::protobuf::MessageLite& value);
  // NotFound when absent; Corruption when the stored bytes do not parse.
  Status Get(Family family, std::string_view key, google::protobuf::MessageLite* value) const;
  // The stored bytes as they are (NotFound when absent).
  Status GetBytes(Family family, std::string_view key, std::string* bytes) const;
  // Visits keys with `prefix` in order until `visit` returns false.
  Status Scan(Family family, std::string_view prefix,
              const std::function<bool(std::string_view key, std::string_view value)>& visit) const;

  // Atomic multi-record writes.
  class Batch {
   public:
    Batch(Batch&& other) noexcept;
    ~Batch();
    void Put(Family family, std::string_view key, const google::protobuf::MessageLite& value);
    void Delete(Family family, std::string_view key);
    // The bytes the batch holds (keys and values): what writing it stores.
    size_t ByteSize() const;

   private:
    friend class Store;
    explicit Batch(Store* store);
    Store* store_;
    std::unique_ptr<rocksdb::WriteBatch> batch_;
  };
  Batch NewBatch();
  Status Write(Batch& batch);

  // Generated samples (see GenerationRecord in records.proto).
  std::optional<v1::GenerationRecord> LookupGeneration(const std::string& key) const;
  Status StoreGeneration(const std::string& key, const v1::GenerationRecord& record);

  // The content-addressed verdict cache.
  std::optional<v1::SampleResult> LookupVerdict(const std::string& key) const;
  Status StoreVerdict(const std::string& key, const v1::SampleResult& result);

 private:
  Store();
  // A store over an open database and the handles its families were opened with.
  static std::unique_ptr<Store> Adopt(const std::string& dir, rocksdb::DB* db,
                                      const std::vector<rocksdb::ColumnFamilyHandle*>& handles);
  rocksdb::ColumnFamilyHandle* Handle(Family family) const;

  // Every write goes through here: the free-space floor, then RocksDB; after a failed write,
  // RocksDB is asked to resume (it stops writing after an I/O error until told to).
  Status Commit(rocksdb::WriteBatch* batch, const std::string& what);

  std::string dir_;
  std::string secondary_dir_;  // OpenForReading: the secondary instance's scratch folder
  uint64_t min_free_bytes_ = 64ull << 20;
  std::atomic<bool> needs_resume_{false};
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // index = Family
};

// The key of a generated sample: everything that decides it. Field order and encoding are
// fixed (length-prefixed fields, the sampling parameters printed exactly).
std::string GenerationKey(const std::string& checkpoint_id, const std::string& system,
                          const std::string& prompt, const v1::SamplingParams& sampling,
                          int64_t seed, int index);

}  // namespace evald
