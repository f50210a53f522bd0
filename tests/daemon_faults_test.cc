// The daemon under faults: kill -9 in the middle of a run, a sample that kills the process on
// every attempt, a full disk.
#include <sys/mount.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "daemon_fixture.h"

namespace evald {
namespace {

TEST_F(DaemonTest, KillDashNineMidRunResumesWithEverySampleCountedOnce) {
  StartDaemon();
  // 14 problems x 20 distinct variants: enough simulations to be interrupted.
  std::string jsonl;
  std::ifstream in(testing::BuiltinDataset() + "/samples_spec-to-rtl.jsonl");
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  int expected_pass = 0, total = 0;
  for (int v = 0; v < 4; ++v) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i % 6 != 0 && i % 6 != 2) continue;  // a right and a wrong sample per problem
      std::string l = lines[i];
      // Make the code distinct without changing its meaning: a comment line before [DONE].
      l.replace(l.rfind("[DONE]"), 6, "// v" + std::to_string(v) + "\\n[DONE]");
      jsonl += l + "\n";
      ++total;
      if (i % 6 == 0) ++expected_pass;
    }
  }
  std::string id = CreateRun(jsonl);
  // Wait until part of it is graded, then kill the daemon without warning.
  for (int i = 0; i < 600; ++i) {
    auto run = Parse<v1::Run>(Get("/v1/runs/" + id).body);
    if (run.samples_done() >= 10) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto mid = Parse<v1::Run>(Get("/v1/runs/" + id).body);
  EXPECT_LT(mid.samples_done(), total) << "the run finished before it could be interrupted";
  EXPECT_EQ(daemon_.Stop(SIGKILL), 128 + SIGKILL);

  StartDaemon();
  v1::Run run = WaitForRun(id);
  ASSERT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
  EXPECT_EQ(run.samples_total(), total);
  EXPECT_EQ(run.samples_done(), total);
  EXPECT_EQ(run.summary().samples(), total);
  EXPECT_EQ(run.summary().categories().at("."), expected_pass);
  auto page =
      Parse<v1::ListSamplesResponse>(Get("/v1/runs/" + id + "/samples?page_size=1000").body);
  EXPECT_EQ(page.samples_size(), total);
  for (const auto& s : page.samples()) EXPECT_TRUE(s.graded());
}

// A sample that kills the daemon every time it is graded (fault injection standing in for a
// crashing tool) must not crash-loop it: a supervisor restarts the daemon, the sample gets '!'
// after two deaths, every other sample is graded as usual, and the run finishes.
TEST_F(DaemonTest, ASampleThatKillsTheDaemonIsGradedBangAndTheRunFinishes) {
  const char* kPoison = "EVALD_TEST_POISON_7f3a";
  ::setenv("EVALD_FAULT_CRASH_ON_CODE", kPoison, 1);
  std::string jsonl;
  int total = 0, expected_pass = 0;
  std::istringstream in(BuiltinSamples());
  std::string line;
  for (int i = 0; std::getline(in, line); ++i) {
    if (i % 6 != 0) continue;  // the right sample of each problem
    jsonl += line + "\n";
    ++total;
    ++expected_pass;
  }
  jsonl +=
      R"({"problem": "Bi01_and_gate", "code": "module TopModule(input a, input b, output out);)"
      R"( // EVALD_TEST_POISON_7f3a\n assign out = a & b;\nendmodule\n"})"
      "\n";
  ++total;
  StartDaemon("--jobs 2");
  std::string id = CreateRun(jsonl);
  int deaths = 0;
  v1::Run run;
  for (int restarts = 0; restarts < 6; ++restarts) {
    // Supervise: wait for the run to finish or the daemon to die, restart it when it died.
    bool died = false;
    for (int i = 0; i < 1200; ++i) {
      auto r = Get("/v1/runs/" + id);
      if (r.status != 200) {
        died = true;
        break;
      }
      run = Parse<v1::Run>(r.body);
      if (run.state() == v1::SUCCEEDED || run.state() == v1::FAILED) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!died) break;
    ++deaths;
    daemon_.Stop(SIGKILL);  // reaps the aborted process
    StartDaemon("--jobs 2");
  }
  ::unsetenv("EVALD_FAULT_CRASH_ON_CODE");
  EXPECT_EQ(deaths, 2);
  ASSERT_EQ(run.state(), v1::SUCCEEDED) << run.state_reason();
  EXPECT_EQ(run.samples_done(), total);
  EXPECT_EQ(run.summary().categories().at("."), expected_pass);  // nothing else was blamed
  auto page =
      Parse<v1::ListSamplesResponse>(Get("/v1/runs/" + id + "/samples?page_size=1000").body);
  int bang = 0;
  for (const auto& s : page.samples()) {
    if (s.code().find(kPoison) == std::string::npos) continue;
    ++bang;
    EXPECT_EQ(s.result().verdict(), "!");
    EXPECT_NE(s.result().detail().find("not simulated again"), std::string::npos)
        << s.result().detail();
  }
  EXPECT_EQ(bang, 1);
}

// A store on a small filesystem that fills up: the daemon refuses new work with 507 and a JSON
// error before the disk is full, keeps serving reads, pauses the runs it accepted, and finishes
// every one of them once the filesystem grows, by itself, without a restart.
TEST_F(DaemonTest, AFullDiskIsRefusedWithAnErrorAndAcceptedRunsFinishOnceSpaceReturns) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  const std::string small = dir_ + "/small";
  std::filesystem::create_directories(small);
  ASSERT_EQ(::mount("evald-test", small.c_str(), "tmpfs", 0, "size=24m"), 0) << strerror(errno);
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{small};
  ASSERT_TRUE(daemon_.Start(small + "/store", tokens_, "--min-free-mb 8 --jobs 2"));

  // Each run: the built-in samples with 100 KB of comment in every design.
  std::string jsonl;
  std::istringstream in(BuiltinSamples());
  std::string line;
  const std::string padding = "// " + std::string(100000, 'p') + "\\n";
  while (std::getline(in, line)) {
    size_t done = line.rfind("[DONE]");
    if (done == std::string::npos) continue;
    jsonl += line.substr(0, done) + padding + line.substr(done) + "\n";
  }
  std::vector<std::string> accepted;
  int refused_status = 0;
  std::string refused_body;
  for (int i = 0; i < 60 && refused_status == 0; ++i) {
    v1::CreateRunRequest req;
    req.mutable_spec()->set_dataset("builtin");
    req.set_samples_jsonl(jsonl);
    auto r = Post("/v1/runs", Json(req));
    if (r.status == 201) {
      accepted.push_back(Parse<v1::Run>(r.body).id());
    } else {
      refused_status = r.status;
      refused_body = r.body;
    }
  }
  ASSERT_EQ(refused_status, 507) << refused_body;
  auto error = Parse<v1::ErrorResponse>(refused_body);
  EXPECT_EQ(error.status(), 507);
  EXPECT_NE(error.error().find("free"), std::string::npos) << error.error();
  ASSERT_FALSE(accepted.empty());
  EXPECT_EQ(Get("/v1/runs").status, 200);  // reads go on
  EXPECT_EQ(Get("/healthz").status, 200);

  ASSERT_EQ(::mount(nullptr, small.c_str(), nullptr, MS_REMOUNT, "size=512m"), 0)
      << strerror(errno);
  for (const auto& id : accepted) {
    v1::Run run = WaitForRun(id, 600);
    EXPECT_EQ(run.state(), v1::SUCCEEDED) << id << ": " << run.state_reason();
    EXPECT_EQ(run.samples_done(), run.samples_total()) << id;
  }
  v1::CreateRunRequest again;
  again.mutable_spec()->set_dataset("builtin");
  again.set_samples_jsonl(BuiltinSamples());
  EXPECT_EQ(Post("/v1/runs", Json(again)).status, 201);
  daemon_.Stop(SIGTERM);
}

}  // namespace
}  // namespace evald
