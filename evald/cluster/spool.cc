#include "evald/cluster/spool.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>

#include "base/file_io.h"
#include "base/hash.h"

namespace evald {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxShardBytes = 512u << 20;  // codes are capped upstream; this bounds a shard
constexpr size_t kMaxResultBytes = 16u << 20;

template <typename M>
Status WriteMessage(const std::string& path, const M& message) {
  std::string bytes;
  if (!message.SerializeToString(&bytes)) return Status::Internal("cannot serialize " + path);
  return WriteFileAtomic(path, bytes);
}

template <typename M>
StatusOr<M> ReadMessage(const std::string& path, size_t max_bytes) {
  auto bytes = ReadFileBounded(path, max_bytes, Links::kRefuse);
  if (!bytes.ok()) return bytes.status();
  M message;
  if (!message.ParseFromString(*bytes)) return Status::Corruption(path + " is not a whole record");
  return message;
}

}  // namespace

bool IsSpoolKey(const std::string& key) {
  if (key.size() < 16 || key.size() > 128) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

Status Spool::Prepare() const {
  if (root_.empty() || root_.front() != '/')
    return Status::InvalidArgument("the spool must be an absolute directory path, not '" + root_ +
                                   "'");
  std::error_code ec;
  for (const char* sub : {"shards", "results", "pending", "logs"}) {
    fs::create_directories(root_ + "/" + sub, ec);
    if (ec) return Status::IoError("cannot create " + root_ + "/" + sub + ": " + ec.message());
  }
  if (::access((root_ + "/results").c_str(), W_OK) != 0)
    return Status::IoError(root_ + "/results is not writable");
  return Status::Ok();
}

StatusOr<std::string> Spool::NewBatch() const {
  const std::string dir = root_ + "/shards/" + std::to_string(::getpid()) + "-" + RandomHex(6);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError("cannot create " + dir + ": " + ec.message());
  return dir;
}

std::string Spool::LogPath(const std::string& job_id, int index) const {
  return root_ + "/logs/" + job_id + "_" + std::to_string(index) + ".log";
}

std::string Spool::ResultPath(const std::string& key) const {
  return root_ + "/results/" + key + ".result";
}

std::string Spool::PendingPath(const std::string& key) const {
  return root_ + "/pending/" + key;
}

Status Spool::WriteShard(const std::string& path, const v1::WorkerShard& shard) const {
  return WriteMessage(path, shard);
}

StatusOr<v1::WorkerShard> Spool::ReadShard(const std::string& path) const {
  return ReadMessage<v1::WorkerShard>(path, kMaxShardBytes);
}

Status Spool::WriteTaskList(const std::string& path, const std::vector<std::string>& shards) const {
  std::string text;
  for (const std::string& s : shards) text += s + "\n";
  return WriteFileAtomic(path, text);
}

StatusOr<std::string> Spool::ShardOfTask(const std::string& task_list, int index) const {
  auto text = ReadFileBounded(task_list, 64u << 20);
  if (!text.ok()) return text.status();
  std::istringstream in(*text);
  std::string line;
  for (int i = 0; std::getline(in, line); ++i)
    if (i == index) return line;
  return Status::NotFound("task " + std::to_string(index) + " is not in " + task_list);
}

StatusOr<std::optional<v1::WorkerResult>> Spool::ReadResult(const std::string& key) const {
  if (!IsSpoolKey(key)) return Status::InvalidArgument("not a spool key: " + key);
  const std::string path = ResultPath(key);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::optional<v1::WorkerResult>();
  auto r = ReadMessage<v1::WorkerResult>(path, kMaxResultBytes);
  if (!r.ok()) return r.status();
  if (r->key() != key) return Status::Corruption(path + " holds the result of another key");
  return std::optional<v1::WorkerResult>(std::move(*r));
}

Status Spool::WriteResult(const v1::WorkerResult& result) const {
  if (!IsSpoolKey(result.key())) return Status::InvalidArgument("not a spool key: " + result.key());
  return WriteMessage(ResultPath(result.key()), result);
}

void Spool::RemoveResult(const std::string& key) const {
  if (IsSpoolKey(key)) ::unlink(ResultPath(key).c_str());
}

std::optional<PendingMark> Spool::ReadPending(const std::string& key) const {
  if (!IsSpoolKey(key)) return std::nullopt;
  auto text = ReadFileBounded(PendingPath(key), 4096, Links::kRefuse);
  if (!text.ok()) return std::nullopt;
  return ParsePendingMark(*text);
}

std::optional<PendingMark> ParsePendingMark(const std::string& text) {
  std::istringstream in(text);
  PendingMark m;
  if (!(in >> m.job_id >> m.index >> m.attempt) || m.index < 0 || m.attempt < 1 ||
      m.job_id.size() > 20)
    return std::nullopt;
  for (char c : m.job_id)
    if (c < '0' || c > '9') return std::nullopt;
  return m;
}

Status Spool::WritePending(const std::string& key, const PendingMark& mark) const {
  if (!IsSpoolKey(key)) return Status::InvalidArgument("not a spool key: " + key);
  return WriteFileAtomic(PendingPath(key), mark.job_id + " " + std::to_string(mark.index) + " " +
                                               std::to_string(mark.attempt) + "\n");
}

void Spool::RemovePending(const std::string& key) const {
  if (IsSpoolKey(key)) ::unlink(PendingPath(key).c_str());
}

void Spool::CollectGarbage(double max_age_s) const {
  const auto now = fs::file_time_type::clock::now();
  auto older = [&](const fs::directory_entry& e, double s) {
    std::error_code ec;
    auto t = e.last_write_time(ec);
    return !ec && std::chrono::duration<double>(now - t).count() > s;
  };
  std::error_code ec;
  for (const char* sub : {"results", "pending", "logs", "shards"}) {
    for (fs::recursive_directory_iterator it(root_ + "/" + sub, ec), end; !ec && it != end;
         it.increment(ec)) {
      if (!it->is_regular_file()) continue;
      const bool temporary = it->path().filename().string().find(".tmp.") != std::string::npos;
      if (older(*it, temporary ? std::min(max_age_s, 3600.0) : max_age_s))
        fs::remove(it->path(), ec);
    }
  }
}

}  // namespace evald
