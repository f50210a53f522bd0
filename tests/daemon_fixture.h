// The daemon test fixture: a daemon over loopback on a scratch store, with a read and a submit
// token, and helpers to submit runs and wait for them.
#pragma once

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "base/file_io.h"
#include "base/hash.h"
#include "daemon_client.h"
#include "evald/proto/api.pb.h"
#include "evald/proto/records.pb.h"
#include "test_support.h"

namespace evald {

using testing::Daemon;
using testing::Http;

inline const char* kRead = "read-token-0123456789abcdef";
inline const char* kSubmit = "submit-token-0123456789abcdef";
inline const char* kOtherSubmit = "other-submit-token-0123456789";  // a second team's

template <typename M>
M Parse(const std::string& json) {
  M m;
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = true;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &m, opts).ok())
      << json.substr(0, 500);
  return m;
}

inline std::string Json(const google::protobuf::Message& m) {
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(m, &out);
  return out;
}

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/tmp/evald-daemon-test-" + RandomHex(6);
    std::filesystem::create_directories(dir_);
    tokens_ = dir_ + "/tokens";
    ASSERT_TRUE(WriteFileAtomic(tokens_, std::string("# test tokens\n") + kRead + " read\n" +
                                             kSubmit + " submit\n" + kOtherSubmit + " submit\n")
                    .ok());
  }
  void TearDown() override {
    daemon_.Stop(SIGKILL);
    std::filesystem::remove_all(dir_);
  }
  void StartDaemon(const std::string& extra = "") {
    ASSERT_TRUE(daemon_.Start(dir_ + "/store", tokens_, extra)) << "daemon did not start";
  }
  testing::HttpResult Get(const std::string& target, const char* token = kRead) {
    return Http(daemon_.port(), "GET", target, token);
  }
  testing::HttpResult Post(const std::string& target, const std::string& body,
                           const char* token = kSubmit) {
    return Http(daemon_.port(), "POST", target, token, body);
  }
  testing::HttpResult Delete(const std::string& target, const char* token = kSubmit) {
    return Http(daemon_.port(), "DELETE", target, token);
  }
  std::string CreateRun(const std::string& jsonl, const std::string& labels = "{}") {
    v1::CreateRunRequest req;
    req.mutable_spec()->set_dataset("builtin");
    req.set_samples_jsonl(jsonl);
    std::string body = Json(req);
    if (labels != "{}") body.insert(body.find("\"spec\":{") + 8, "\"labels\":" + labels + ",");
    auto r = Post("/v1/runs", body);
    EXPECT_EQ(r.status, 201) << r.body;
    return Parse<v1::Run>(r.body).id();
  }
  v1::Run WaitForRun(const std::string& id, int timeout_s = 120) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    v1::Run run;
    while (std::chrono::steady_clock::now() < deadline) {
      run = Parse<v1::Run>(Get("/v1/runs/" + id).body);
      if (run.state() == v1::SUCCEEDED || run.state() == v1::FAILED || run.state() == v1::CANCELLED)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return run;
  }
  static std::string BuiltinSamples() {
    return *ReadFileBounded(testing::BuiltinDataset() + "/samples_spec-to-rtl.jsonl");
  }

  std::string dir_, tokens_;
  Daemon daemon_;
};

}  // namespace evald
