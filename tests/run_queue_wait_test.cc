// The run-queue wait the sandbox's init reads from the kernel (sandbox/init/run_queue_wait.h): its
// parser on what the kernel writes and on what it never should, and the real kernel's figure for
// a process that waits for a CPU and for one that sleeps.
#include "sandbox/init/run_queue_wait.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "base/file_io.h"

namespace evald::sandbox {
namespace {

int64_t Parse(const std::string& s) {
  return ParseRunDelay(s.data(), s.size());
}

TEST(RunQueueWaitTest, ParsesTheKernelsThreeFields) {
  EXPECT_EQ(Parse("3981510 5113267 2\n"), 5113267);
  EXPECT_EQ(Parse("0 0 0\n"), 0);  // a kernel that keeps no statistics
  auto self = ReadFileBounded("/proc/self/schedstat");
  ASSERT_TRUE(self.ok()) << self.status().ToString();
  EXPECT_GE(Parse(*self), 0) << *self;
}

TEST(RunQueueWaitTest, RefusesAnythingElse) {
  for (const char* bad :
       {"", "\n", "1 2 3", "1 2\n", "1 2 3 4\n", "1  2 3\n", " 1 2 3\n", "1 -2 3\n", "1 2 3\nx",
        "a b c\n", "1 0x10 3\n", "1 99999999999999999999 3\n"})
    EXPECT_EQ(Parse(bad), -1) << '"' << bad << '"';
}

// Children pinned to one CPU: `spinners` that never stop and the one measured, which spins or
// sleeps for a while and exits.
class PinnedChildren {
 public:
  ~PinnedChildren() {
    for (pid_t pid : pids_) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  pid_t Start(bool spin, std::chrono::milliseconds for_how_long) {
    pid_t pid = ::fork();
    if (pid == 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(0, &one);
      ::sched_setaffinity(0, sizeof one, &one);
      if (!spin) {
        // One long sleep: every wake-up waits for its turn behind whatever else runs on the CPU
        // (the spinners, other tests' load), so a sleeper that woke often would wait too.
        std::this_thread::sleep_for(for_how_long);
        ::_exit(0);
      }
      const auto end = std::chrono::steady_clock::now() + for_how_long;
      while (std::chrono::steady_clock::now() < end) {
      }
      ::_exit(0);
    }
    if (pid > 0) pids_.push_back(pid);
    return pid;
  }

 private:
  std::vector<pid_t> pids_;
};

// Beside two spinners on its CPU a spinning process waits about two thirds of its wall time; a
// sleeping one hardly waits at all.
TEST(RunQueueWaitTest, ReadsTheKernelsFigureForAProcessThatWaits) {
  PinnedChildren children;
  for (int i = 0; i < 2; ++i) ASSERT_GT(children.Start(true, std::chrono::hours(1)), 0);
  const pid_t spinner = children.Start(true, std::chrono::milliseconds(600));
  const pid_t sleeper = children.Start(false, std::chrono::milliseconds(600));
  ASSERT_GT(spinner, 0);
  ASSERT_GT(sleeper, 0);
  RunQueueWait spinner_wait(spinner), sleeper_wait(sleeper);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const int64_t spun = spinner_wait.WaitedNs(), slept = sleeper_wait.WaitedNs();
  EXPECT_GT(spun, 150'000'000) << "ns";
  EXPECT_LT(slept, spun / 2) << "ns";
  // The last value stays once the process is gone.
  ::waitpid(spinner, nullptr, 0);
  EXPECT_GE(spinner_wait.WaitedNs(), spun);
}

TEST(RunQueueWaitTest, ReadsNothingForNoProcess) {
  RunQueueWait none(0);
  EXPECT_EQ(none.WaitedNs(), 0);
}

}  // namespace
}  // namespace evald::sandbox
