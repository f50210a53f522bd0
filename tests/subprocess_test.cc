// RunProcess ends everything a program started when its deadline passes or when it exits: a
// driver killed alone (iverilog) once left its preprocessor running, unbounded, for the rest of
// the test run.
#include "base/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "base/file_io.h"
#include "base/hash.h"

namespace evald {
namespace {

// Gone, or a zombie waiting for its new parent: no longer running.
bool Running(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

int ReadPid(const std::string& path) {
  auto text = ReadFileBounded(path);
  return text.ok() && !text->empty() ? std::stoi(*text) : -1;
}

bool EndsWithin(int pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (Running(pid) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return !Running(pid);
}

TEST(Subprocess, ADeadlineEndsWhatTheProgramStarted) {
  const std::string pidfile = "/tmp/evald-subprocess-" + RandomHex(6);
  ProcessOptions o;
  o.timeout = std::chrono::milliseconds(500);
  auto r = RunProcess({"sh", "-c", "sleep 300 & echo $! > " + pidfile + "; wait"}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->timed_out);
  const int child = ReadPid(pidfile);
  ASSERT_GT(child, 0);
  EXPECT_TRUE(EndsWithin(child, std::chrono::seconds(5))) << "the grandchild outlived the deadline";
  ::unlink(pidfile.c_str());
}

TEST(Subprocess, WhatAProgramLeavesBehindEndsWithIt) {
  const std::string pidfile = "/tmp/evald-subprocess-" + RandomHex(6);
  auto r = RunProcess(
      {"sh", "-c", "sleep 300 > /dev/null 2>&1 & echo $! > " + pidfile + "; echo started"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_NE(r->output.find("started"), std::string::npos);
  const int child = ReadPid(pidfile);
  ASSERT_GT(child, 0);
  EXPECT_TRUE(EndsWithin(child, std::chrono::seconds(5))) << "left running after the exit";
  ::unlink(pidfile.c_str());
}

}  // namespace
}  // namespace evald
