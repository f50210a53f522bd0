// The spool shared with `evald worker` and the parsing of Slurm's output: what a submitter reads
// back is checked before it is believed (whole records, the right key, plain markers).
#include <gtest/gtest.h>

#include <filesystem>

#include "base/file_io.h"
#include "base/hash.h"
#include "evald/cluster/slurm_client.h"
#include "evald/cluster/slurm_executor.h"
#include "evald/cluster/spool.h"

namespace evald {
namespace {

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = "/tmp/evald-spool-test-" + RandomHex(6);
    std::filesystem::create_directories(root_);
    spool_ = Spool(root_);
    ASSERT_TRUE(spool_.Prepare().ok());
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string root_;
  Spool spool_{"/nonexistent"};
};

TEST_F(SpoolTest, ResultsAreReadWholeAndOnlyUnderTheirOwnKey) {
  const std::string key(64, 'c'), other(64, 'd');
  auto none = spool_.ReadResult(key);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  v1::WorkerResult r;
  r.set_key(key);
  r.mutable_verdict()->set_verdict(".");
  ASSERT_TRUE(spool_.WriteResult(r).ok());
  auto back = spool_.ReadResult(key);
  ASSERT_TRUE(back.ok() && back->has_value());
  EXPECT_EQ((*back)->verdict().verdict(), ".");
  // A result file holding another key's result, or half a record, is not believed.
  std::filesystem::copy_file(root_ + "/results/" + key + ".result",
                             root_ + "/results/" + other + ".result");
  EXPECT_FALSE(spool_.ReadResult(other).ok());
  ASSERT_TRUE(WriteFileAtomic(root_ + "/results/" + other + ".result", "\x0a\xff\xff").ok());
  EXPECT_FALSE(spool_.ReadResult(other).ok());
  // Keys become file names: nothing but lower-case hex.
  EXPECT_FALSE(spool_.ReadResult("../../etc/passwd").ok());
  r.set_key("ABC/../x");
  EXPECT_FALSE(spool_.WriteResult(r).ok());
  spool_.RemoveResult(key);
  EXPECT_FALSE(spool_.ReadResult(key)->has_value());
}

TEST_F(SpoolTest, MarkersAndTaskLists) {
  const std::string key(32, 'e');
  ASSERT_TRUE(spool_.WritePending(key, {"123", 4, 2}).ok());
  auto mark = spool_.ReadPending(key);
  ASSERT_TRUE(mark.has_value());
  EXPECT_EQ(mark->job_id, "123");
  EXPECT_EQ(mark->index, 4);
  EXPECT_EQ(mark->attempt, 2);
  spool_.RemovePending(key);
  EXPECT_FALSE(spool_.ReadPending(key).has_value());
  EXPECT_FALSE(ParsePendingMark("12;rm 0 1").has_value());
  EXPECT_FALSE(ParsePendingMark("12 -1 1").has_value());
  EXPECT_FALSE(ParsePendingMark("12 0 0").has_value());
  EXPECT_FALSE(ParsePendingMark("").has_value());
  ASSERT_TRUE(spool_.WriteTaskList(root_ + "/tasks", {"/a/0.shard", "/a/1.shard"}).ok());
  EXPECT_EQ(*spool_.ShardOfTask(root_ + "/tasks", 1), "/a/1.shard");
  EXPECT_FALSE(spool_.ShardOfTask(root_ + "/tasks", 2).ok());
}

TEST(SlurmClient, SqueueLinesOfArrayTasksOnly) {
  auto tasks = ParseSqueueTasks(
      "41 0 RUNNING None\n41 7 PENDING Resources\n42 N/A RUNNING None\ngarbage\n\n"
      "x1 2 RUNNING None\n43 1 COMPLETING\n");
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks.at("41_0").state, "RUNNING");
  EXPECT_EQ(tasks.at("41_7").reason, "Resources");
  EXPECT_EQ(tasks.at("43_1").state, "COMPLETING");
}

TEST(SlurmClient, ExecutorOptionsAreChecked) {
  ExecutorOptions o;
  EXPECT_TRUE(ValidateExecutor(o).ok());
  o.executor = "kubernetes";
  EXPECT_FALSE(ValidateExecutor(o).ok());
  o.executor = "slurm";
  EXPECT_NE(ValidateExecutor(o).message().find("--spool"), std::string::npos);
  o.slurm.spool = "relative/spool";
  EXPECT_FALSE(ValidateExecutor(o).ok());
  o.slurm.spool = "/shared/spool";
  EXPECT_TRUE(ValidateExecutor(o).ok());
}

}  // namespace
}  // namespace evald
