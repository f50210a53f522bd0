#include "evald/store/store.h"

#include <stdlib.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include <google/protobuf/message_lite.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <fmt/format.h>

#include <chrono>
#include <filesystem>

#include "base/clock.h"
#include "base/hash.h"

#include "evald/proto/records.pb.h"

namespace evald {

namespace {

// In Family's order. Families are only ever added at the end.
const char* const kFamilyNames[] = {"checkpoints",   "runs",         "samples",
                                    "verdict_cache", "generations",  "grading_in_flight",
                                    "calibrations",  "cross_checks", "tool_versions"};

Status FromRocks(const rocksdb::Status& st, const std::string& what) {
  if (st.ok()) return Status::Ok();
  if (st.IsNotFound()) return Status::NotFound(what);
  if (st.IsCorruption()) return Status::Corruption(what + ": " + st.ToString());
  if (st.IsNoSpace()) return Status::NoSpace(what + ": " + st.ToString());
  return Status::IoError(what + ": " + st.ToString());
}

}  // namespace

namespace {

// The default family (which evald does not use) and then evald's, in Family's order.
std::vector<rocksdb::ColumnFamilyDescriptor> FamilyDescriptors() {
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  families.emplace_back(rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions());
  for (const char* name : kFamilyNames) families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  return families;
}

}  // namespace

std::unique_ptr<Store> Store::Adopt(const std::string& dir, rocksdb::DB* db,
                                    const std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
  std::unique_ptr<Store> store(new Store());
  store->dir_ = dir;
  store->db_.reset(db);
  // handles[0] is the default family, which evald does not use.
  store->handles_.assign(handles.begin() + 1, handles.end());
  db->DestroyColumnFamilyHandle(handles[0]);
  return store;
}

StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& dir) {
  rocksdb::DBOptions db_opts;
  db_opts.create_if_missing = true;
  db_opts.create_missing_column_families = true;
  db_opts.max_background_jobs = 2;
  db_opts.keep_log_file_num = 3;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  auto st = rocksdb::DB::Open(db_opts, dir, FamilyDescriptors(), &handles, &raw);
  if (!st.ok()) return FromRocks(st, "opening the store at " + dir);
  return Adopt(dir, raw, handles);
}

StatusOr<std::unique_ptr<Store>> Store::OpenForReading(const std::string& dir) {
  if (!std::filesystem::exists(dir + "/CURRENT")) return Status::NotFound("no store at " + dir);
  char scratch[] = "/tmp/evald-store-reader-XXXXXX";
  if (::mkdtemp(scratch) == nullptr)
    return Status::IoError(std::string("cannot create a scratch folder: ") + std::strerror(errno));
  rocksdb::DBOptions db_opts;
  db_opts.max_open_files = -1;  // a secondary instance keeps every table file open
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  auto st =
      rocksdb::DB::OpenAsSecondary(db_opts, dir, scratch, FamilyDescriptors(), &handles, &raw);
  if (st.ok()) st = raw->TryCatchUpWithPrimary();
  if (!st.ok()) {
    if (raw != nullptr) {
      for (auto* h : handles) raw->DestroyColumnFamilyHandle(h);
      delete raw;
    }
    std::error_code ec;
    std::filesystem::remove_all(scratch, ec);
    return FromRocks(st, "opening the store at " + dir + " for reading");
  }
  std::unique_ptr<Store> store = Adopt(dir, raw, handles);
  store->secondary_dir_ = scratch;
  return store;
}

Store::Store() = default;

Store::Batch::Batch(Store* store)
    : store_(store), batch_(std::make_unique<rocksdb::WriteBatch>()) {}
Store::Batch::Batch(Batch&& other) noexcept = default;
Store::Batch::~Batch() = default;

Store::Batch Store::NewBatch() {
  return Batch(this);
}

Store::~Store() {
  for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
  db_.reset();
  if (!secondary_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(secondary_dir_, ec);
  }
}

rocksdb::ColumnFamilyHandle* Store::Handle(Family family) const {
  return handles_[static_cast<size_t>(family)];
}

Status Store::CheckFreeSpace() const {
  struct statvfs fs {};
  if (::statvfs(dir_.c_str(), &fs) != 0)
    return Status::IoError("cannot read the free space of " + dir_ + ": " + std::strerror(errno));
  uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (free_bytes >= min_free_bytes_) return Status::Ok();
  return Status::NoSpace("the store's filesystem has " + std::to_string(free_bytes >> 20) +
                         " MiB free, under the floor of " + std::to_string(min_free_bytes_ >> 20) +
                         " MiB: writes are refused until space returns (reads go on)");
}

Status Store::Commit(rocksdb::WriteBatch* batch, const std::string& what) {
  if (!secondary_dir_.empty())
    return Status::Unavailable(what + ": the store at " + dir_ + " is open for reading only");
  EVALD_RETURN_IF_ERROR(CheckFreeSpace());
  if (needs_resume_.load()) {
    rocksdb::Status resumed = db_->Resume();
    if (!resumed.ok()) return FromRocks(resumed, "resuming the store after a failed write");
    needs_resume_ = false;
  }
  rocksdb::Status st = db_->Write(rocksdb::WriteOptions(), batch);
  if (!st.ok()) needs_resume_ = true;
  return FromRocks(st, what);
}

Status Store::Put(Family family, std::string_view key, const google::protobuf::MessageLite& value) {
  std::string bytes;
  if (!value.SerializeToString(&bytes)) return Status::Internal("cannot serialize record");
  rocksdb::WriteBatch batch;
  batch.Put(Handle(family), rocksdb::Slice(key.data(), key.size()), bytes);
  return Commit(&batch, "writing " + std::string(key));
}

Status Store::GetBytes(Family family, std::string_view key, std::string* bytes) const {
  auto st = db_->Get(rocksdb::ReadOptions(), Handle(family), rocksdb::Slice(key.data(), key.size()),
                     bytes);
  return FromRocks(st, std::string(key));
}

Status Store::Get(Family family, std::string_view key, google::protobuf::MessageLite* value) const {
  std::string bytes;
  EVALD_RETURN_IF_ERROR(GetBytes(family, key, &bytes));
  if (!value->ParseFromString(bytes))
    return Status::Corruption("stored record " + std::string(key) + " does not parse");
  return Status::Ok();
}

Status Store::Scan(Family family, std::string_view prefix,
                   const std::function<bool(std::string_view, std::string_view)>& visit) const {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), Handle(family)));
  for (it->Seek(rocksdb::Slice(prefix.data(), prefix.size())); it->Valid(); it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    if (key.substr(0, prefix.size()) != prefix) break;
    if (!visit(key, std::string_view(it->value().data(), it->value().size()))) break;
  }
  return FromRocks(it->status(), "scanning");
}

void Store::Batch::Put(Family family, std::string_view key,
                       const google::protobuf::MessageLite& value) {
  std::string bytes;
  value.SerializeToString(&bytes);
  batch_->Put(store_->Handle(family), rocksdb::Slice(key.data(), key.size()), bytes);
}

void Store::Batch::Delete(Family family, std::string_view key) {
  batch_->Delete(store_->Handle(family), rocksdb::Slice(key.data(), key.size()));
}

size_t Store::Batch::ByteSize() const {
  return batch_->GetDataSize();
}

Status Store::Write(Batch& batch) {
  return Commit(batch.batch_.get(), "writing a batch");
}

std::optional<v1::GenerationRecord> Store::LookupGeneration(const std::string& key) const {
  v1::GenerationRecord record;
  if (!Get(Family::kGenerations, key, &record).ok()) return std::nullopt;
  return record;
}

Status Store::StoreGeneration(const std::string& key, const v1::GenerationRecord& record) {
  return Put(Family::kGenerations, key, record);
}

std::string GenerationKey(const std::string& checkpoint_id, const std::string& system,
                          const std::string& prompt, const v1::SamplingParams& sampling,
                          int64_t seed, int index) {
  // %.17g round-trips doubles: 0.85 and 0.8500000001 are different keys.
  std::string params = fmt::format("t={:.17g} p={:.17g} k={} minp={:.17g} max={} n={}",
                                   sampling.temperature(), sampling.top_p(), sampling.top_k(),
                                   sampling.min_p(), sampling.max_tokens(), sampling.n());
  for (const auto& stop : sampling.stop()) params += " stop=" + Sha256Hex(stop);
  return "gen-" + Sha256OfFields({"evald-generation", checkpoint_id, system, prompt, params,
                                  std::to_string(seed), std::to_string(index)});
}

std::optional<v1::SampleResult> Store::LookupVerdict(const std::string& key) const {
  v1::CachedVerdict cached;
  if (!Get(Family::kVerdictCache, key, &cached).ok()) return std::nullopt;
  return cached.result();
}

Status Store::StoreVerdict(const std::string& key, const v1::SampleResult& result) {
  v1::CachedVerdict cached;
  *cached.mutable_result() = result;
  cached.set_created_unix_ms(UnixMillis());
  return Put(Family::kVerdictCache, key, cached);
}

}  // namespace evald
