#include "evald/store/store.h"

#include <gtest/gtest.h>

#include "base/hash.h"
#include "datasets/dataset.h"
#include "evald/proto/records.pb.h"
#include "evald/runs/evaluation.h"
#include "test_support.h"

namespace evald {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = "/tmp/evald-store-test-" + RandomHex(6); }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string dir_;
};

TEST_F(StoreTest, PutGetScanBatchAndReopen) {
  {
    auto store = Store::Open(dir_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    v1::Checkpoint ck;
    ck.set_id("ck1");
    ck.set_name("gemma-lora-tpu");
    ASSERT_TRUE((*store)->Put(Family::kCheckpoints, "ck1", ck).ok());
    auto batch = (*store)->NewBatch();
    for (int i = 0; i < 3; ++i) {
      v1::StoredSample s;
      s.set_run_id("r1");
      s.set_index(i);
      batch.Put(Family::kSamples, "r1/P/" + std::to_string(i), s);
    }
    v1::StoredSample other;
    batch.Put(Family::kSamples, "r2/P/0", other);
    ASSERT_TRUE((*store)->Write(batch).ok());
  }
  auto store = Store::Open(dir_);  // everything survives a reopen
  ASSERT_TRUE(store.ok());
  v1::Checkpoint ck;
  ASSERT_TRUE((*store)->Get(Family::kCheckpoints, "ck1", &ck).ok());
  EXPECT_EQ(ck.name(), "gemma-lora-tpu");
  EXPECT_EQ((*store)->Get(Family::kCheckpoints, "nope", &ck).code(), Status::Code::kNotFound);
  int seen = 0;
  ASSERT_TRUE((*store)
                  ->Scan(Family::kSamples, "r1/",
                         [&](std::string_view key, std::string_view) {
                           EXPECT_EQ(key.substr(0, 3), "r1/");
                           ++seen;
                           return true;
                         })
                  .ok());
  EXPECT_EQ(seen, 3);
  // Bytes that are not the expected record are reported, not trusted.
  v1::CachedVerdict junk;
  junk.mutable_result()->set_detail(std::string(100, '\xff'));
  ASSERT_TRUE((*store)->Put(Family::kRuns, "bad", junk).ok());
  v1::Checkpoint wrong;
  (void)(*store)->Get(Family::kRuns, "bad", &wrong);  // must not crash whatever it returns
}

TEST_F(StoreTest, GenerationRecordsAreKeyedByEverythingThatDecidesThem) {
  v1::SamplingParams p;
  p.set_temperature(0.85);
  p.set_top_p(0.95);
  p.set_max_tokens(1024);
  p.set_n(20);
  std::string key = GenerationKey("ck1", "sys", "prompt", p, 7, 3);
  EXPECT_EQ(key, GenerationKey("ck1", "sys", "prompt", p, 7, 3));
  EXPECT_NE(key, GenerationKey("ck1", "sys", "prompt", p, 7, 4));
  EXPECT_NE(key, GenerationKey("ck1", "sys", "prompt", p, 8, 3));
  EXPECT_NE(key, GenerationKey("ck2", "sys", "prompt", p, 7, 3));
  EXPECT_NE(key, GenerationKey("ck1", "sy", "sprompt", p, 7, 3));
  v1::SamplingParams q = p;
  q.set_temperature(0.8500000001);
  EXPECT_NE(key, GenerationKey("ck1", "sys", "prompt", q, 7, 3));
  auto store = Store::Open(dir_);
  ASSERT_TRUE(store.ok());
  EXPECT_FALSE((*store)->LookupGeneration(key).has_value());
  v1::GenerationRecord rec;
  rec.set_completion("[BEGIN]module TopModule(); endmodule[DONE]");
  ASSERT_TRUE((*store)->StoreGeneration(key, rec).ok());
  auto got = (*store)->LookupGeneration(key);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->completion(), rec.completion());
}

TEST_F(StoreTest, SecondEvaluationIsAPureCacheLookup) {
  auto ds = Dataset::Load(testing::BuiltinDataset(), Task::kSpecToRtl);
  ASSERT_TRUE(ds.ok());
  auto samples = ReadSamplesJsonl(testing::BuiltinDataset() + "/samples_spec-to-rtl.jsonl");
  ASSERT_TRUE(samples.ok());
  auto store = Store::Open(dir_);
  ASSERT_TRUE(store.ok());
  EvalOptions opts;
  opts.resources.store = store->get();
  auto first = Evaluate(*ds, *samples, opts);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->summary().cache_hits(), 0);
  EXPECT_GT(first->summary().simulations(), 0);
  auto second = Evaluate(*ds, *samples, opts);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->summary().simulations(), 0);  // calibrations come from the cache too
  EXPECT_EQ(second->summary().cache_hits(), first->summary().simulations() - 14);
  ASSERT_EQ(first->samples_size(), second->samples_size());
  for (int i = 0; i < first->samples_size(); ++i) {
    EXPECT_EQ(first->samples(i).verdict(), second->samples(i).verdict());
    EXPECT_EQ(first->samples(i).mismatches(), second->samples(i).mismatches());
  }
  EXPECT_DOUBLE_EQ(first->summary().pass_at().at("1"), second->summary().pass_at().at("1"));
  // Another simulator is another key.
  EvalOptions fixed = opts;
  fixed.grading.set_simulate_timeout_ms(7000);
  auto third = Evaluate(*ds, *samples, fixed);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->summary().cache_hits(), 0);
}

}  // namespace
}  // namespace evald
