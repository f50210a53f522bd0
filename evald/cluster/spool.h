// The spool directory that a submitting evald and its workers share (a shared filesystem on a
// cluster): shards of grading jobs going out, one result file per job coming back, and a marker
// per job in flight so that a restarted daemon finds the array already grading it.
//
//   SPOOL/shards/BATCH/task_I.shard   a WorkerShard (binary protobuf)
//   SPOOL/shards/BATCH/tasks          the shard of each array index, one path per line
//   SPOOL/results/KEY.result          a WorkerResult, written by the worker
//   SPOOL/pending/KEY                 "JOBID INDEX ATTEMPT": the array task grading KEY
//   SPOOL/logs/JOBID_INDEX.log        the array task's standard output and error
//
// Every file is written whole (temporary file + rename): a reader sees all of it or nothing, and
// a worker killed half-way leaves no partial result.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "evald/proto/worker.pb.h"

namespace evald {

// Where a job in flight is being graded.
struct PendingMark {
  std::string job_id;  // the array job
  int index = 0;       // its task
  int attempt = 1;     // 1 for the first submission
};

class Spool {
 public:
  explicit Spool(std::string root) : root_(std::move(root)) {}

  // Creates the folders; fails when the root is not a writable directory.
  Status Prepare() const;
  const std::string& root() const { return root_; }

  // A new folder for one submission's shards; its path.
  StatusOr<std::string> NewBatch() const;
  std::string LogPattern() const { return root_ + "/logs/%A_%a.log"; }
  std::string LogPath(const std::string& job_id, int index) const;

  Status WriteShard(const std::string& path, const v1::WorkerShard& shard) const;
  StatusOr<v1::WorkerShard> ReadShard(const std::string& path) const;
  // The task list of a submission: line i is the shard of array index i.
  Status WriteTaskList(const std::string& path, const std::vector<std::string>& shards) const;
  StatusOr<std::string> ShardOfTask(const std::string& task_list, int index) const;

  // The result of `key`: nullopt when there is none (yet); an error when the file is there but
  // is not a whole result for that key.
  StatusOr<std::optional<v1::WorkerResult>> ReadResult(const std::string& key) const;
  Status WriteResult(const v1::WorkerResult& result) const;
  void RemoveResult(const std::string& key) const;

  std::optional<PendingMark> ReadPending(const std::string& key) const;
  Status WritePending(const std::string& key, const PendingMark& mark) const;
  void RemovePending(const std::string& key) const;

  // Removes results and markers older than `max_age_s`, and temporary files a killed writer
  // left (older than an hour).
  void CollectGarbage(double max_age_s) const;

 private:
  std::string ResultPath(const std::string& key) const;
  std::string PendingPath(const std::string& key) const;

  std::string root_;
};

// "JOBID INDEX ATTEMPT" as a marker holds it; nullopt for anything else.
std::optional<PendingMark> ParsePendingMark(const std::string& text);

// Keys name files: only lower-case hex digits, 16 to 128 of them.
bool IsSpoolKey(const std::string& key);

}  // namespace evald
