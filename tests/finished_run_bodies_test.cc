#include "evald/server/finished_run_bodies.h"

#include <gtest/gtest.h>

namespace evald {
namespace {

TEST(FinishedRunBodies, ServesABodyOnlyForTheBytesItWasMadeFrom) {
  FinishedRunBodies bodies;
  EXPECT_FALSE(bodies.Find("run-1", "v1"));
  bodies.Keep("run-1", "v1", "{\"id\":\"run-1\"}");
  EXPECT_EQ(bodies.Find("run-1", "v1"), "{\"id\":\"run-1\"}");
  EXPECT_FALSE(bodies.Find("run-1", "v2"));  // resumed: the record changed
  bodies.Keep("run-1", "v2", "{\"id\":\"run-1\",\"state\":\"RUNNING\"}");
  EXPECT_FALSE(bodies.Find("run-1", "v1"));
  EXPECT_TRUE(bodies.Find("run-1", "v2"));
}

TEST(FinishedRunBodies, KeepsAtMostItsCapacityOldestOut) {
  FinishedRunBodies bodies;
  for (size_t i = 0; i < FinishedRunBodies::kCapacity + 10; ++i)
    bodies.Keep("run-" + std::to_string(i), "r", "b");
  EXPECT_FALSE(bodies.Find("run-0", "r"));
  EXPECT_FALSE(bodies.Find("run-9", "r"));
  EXPECT_TRUE(bodies.Find("run-10", "r"));
  EXPECT_TRUE(bodies.Find("run-" + std::to_string(FinishedRunBodies::kCapacity + 9), "r"));
}

}  // namespace
}  // namespace evald
