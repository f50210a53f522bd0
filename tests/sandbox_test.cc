// Containment tests of the sandbox itself, with ordinary programs standing in for hostile
// designs: they try what a design executed by Verilator (or a broken simulator) could try.
#include "sandbox/sandbox_worker.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "base/file_io.h"
#include "test_support.h"

namespace evald {
namespace {

using sandbox::JobRequest;
using sandbox::StepResult;
using namespace std::chrono_literals;

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    worker_ = std::make_unique<SandboxWorker>(SandboxOptions{}, 0);
    Status st = worker_->Start();
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // Runs `sh -c script` with generous defaults that single tests tighten.
  StepResult Sh(const std::string& script, uint32_t timeout_ms = 10000,
                std::map<std::string, std::string> files = {}) {
    JobRequest job;
    for (auto& [k, v] : files) (*job.mutable_files())[k] = v;
    auto* step = job.add_steps();
    step->add_argv("sh");
    step->add_argv("-c");
    step->add_argv(script);
    step->set_timeout_ms(timeout_ms);
    step->set_max_output_bytes(1 << 20);
    step->set_max_processes(64);
    step->set_address_space_bytes(1ull << 30);
    step->set_file_size_bytes(16 << 20);
    step->set_cpu_seconds(timeout_ms / 1000 + 2);
    return RunJob(job);
  }

  StepResult RunJob(const JobRequest& job) {
    auto r = worker_->Run(job, 60s);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || r->steps_size() == 0) return StepResult();
    return r->steps(0);
  }

  bool Full() const { return worker_->layers().ContainsNativeCode(); }

  std::unique_ptr<SandboxWorker> worker_;
};

TEST_F(SandboxTest, ReportsItsLayers) {
  std::string d = worker_->layers().Describe();
  EXPECT_NE(d.find("rlimits=on"), std::string::npos) << d;
  if (::geteuid() == 0) {
    // As root on Linux every layer but cgroups must be there (CI runs as root).
    EXPECT_TRUE(Full()) << d;
  }
}

TEST_F(SandboxTest, RunsAStepAndCapturesBothStreams) {
  auto r = Sh("echo out; echo err >&2; exit 3");
  EXPECT_EQ(r.outcome(), StepResult::EXITED);
  EXPECT_EQ(r.exit_code(), 3);
  EXPECT_NE(r.output().find("out\n"), std::string::npos);
  EXPECT_NE(r.output().find("err\n"), std::string::npos);
}

TEST_F(SandboxTest, InputsAreReadOnlyAndIdentityIsUnprivileged) {
  auto r =
      Sh("cat in.txt; echo x > in.txt && echo WROTE; id -u; echo scratch-ok > mine && cat mine",
         10000, {{"in.txt", "data\n"}});
  EXPECT_NE(r.output().find("data\n"), std::string::npos);
  EXPECT_EQ(r.output().find("WROTE"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("scratch-ok"), std::string::npos) << r.output();
  if (Full()) {
    EXPECT_EQ(r.output().find("\n0\n"), std::string::npos) << r.output();
  }
}

TEST_F(SandboxTest, HostFilesAreInvisible) {
  if (!Full()) GTEST_SKIP() << worker_->layers().Describe();
  std::string src = testing::SourceDir();
  auto r = Sh("for p in " + src + " /root /home /etc/passwd /etc/shadow /etc/hostname /var /run " +
              "/sys/fs/cgroup /proc/1/root/etc/passwd; do test -e $p && echo VISIBLE $p; done; "
              "ls /; echo end");
  EXPECT_EQ(r.output().find("VISIBLE"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("usr"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("end"), std::string::npos);
}

// Host facts a design could print into a report: none are visible.
TEST_F(SandboxTest, HostFactsAreHidden) {
  if (!Full()) GTEST_SKIP() << worker_->layers().Describe();
  auto r =
      Sh("echo cmdline=[$(cat /proc/cmdline)]; echo boot=[$(cat "
         "/proc/sys/kernel/random/boot_id)]; echo host=[$(cat /proc/sys/kernel/hostname)]; "
         "echo cgroup-paths=[$(grep -cv ':/$' /proc/self/cgroup)]");
  EXPECT_NE(r.output().find("cmdline=[]"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("boot=[]"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("host=[evald-sandbox]"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("cgroup-paths=[0]"), std::string::npos) << r.output();  // all "/"
}

// Processes beside the test that run `script` in a loop: by default they fork short-lived
// programs without pause, as a build or another grader does, which charged a tick-sampled CPU
// timer (ITIMER_PROF) ticks its step did not use.
class LoadLoops {
 public:
  explicit LoadLoops(int loops, const char* script = "while :; do /bin/true; done") {
    for (int i = 0; i < loops; ++i) {
      pid_t pid = ::fork();
      if (pid == 0) {
        ::setpgid(0, 0);
        ::execl("/bin/sh", "sh", "-c", script, static_cast<char*>(nullptr));
        ::_exit(127);
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~LoadLoops() {
    for (pid_t pid : pids_) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }

 private:
  std::vector<pid_t> pids_;
};

// The CPU-time limit is kept to the millisecond (StepSpec.cpu_limit_ms, the process's CPU clock
// read by the init): a spinning step is killed once it has used its 300 ms of CPU, never before,
// however long it waited for a CPU and whatever else runs; a step that waits without computing
// is not limited by it; a step that ignores every signal it can is killed all the same.
TEST_F(SandboxTest, CpuTimeLimitHoldsToTheMillisecond) {
  auto limited = [&](const std::string& script) {
    JobRequest job;
    auto* step = job.add_steps();
    for (const char* a : {"sh", "-c"}) step->add_argv(a);
    step->add_argv(script);
    step->set_timeout_ms(20000);
    step->set_cpu_limit_ms(300);
    step->set_cpu_seconds(1);
    return RunJob(job);
  };
  auto expect_limited = [](const StepResult& r, const char* what) {
    EXPECT_EQ(r.outcome(), StepResult::CPU_LIMIT) << what;
    EXPECT_GE(r.cpu_ms(), 300u) << what;
    EXPECT_LT(r.cpu_ms(), 500u) << what;
  };
  expect_limited(limited("while :; do :; done"), "spin");
  auto idle = limited("sleep 1; echo done");
  EXPECT_EQ(idle.outcome(), StepResult::EXITED);
  EXPECT_NE(idle.output().find("done"), std::string::npos) << idle.output();
  expect_limited(limited("trap '' PROF XCPU TERM INT HUP; while :; do :; done"), "ignoring");
  LoadLoops load(3);
  for (int i = 0; i < 3; ++i) expect_limited(limited("while :; do :; done"), "spin under load");
}

// The wall-clock backstop (StepSpec.timeout_ms) does not count the step's waits for a CPU: a step
// that computes 0.5 s beside six spinners on its one CPU takes several times that in wall time and
// still finishes under a 2 s backstop, while one that sleeps is ended at the backstop however
// loaded the CPU, and every step at its plain wall-time ceiling (StepSpec.max_wall_ms). Only the
// step's own process's waits are counted: a step that waits for its children (a shell, make) has
// the plain wall time as before.
TEST_F(SandboxTest, WallBackstopDoesNotCountWaitsForACpu) {
  cpu_set_t all, one;
  ASSERT_EQ(::sched_getaffinity(0, sizeof all, &all), 0);
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  // A worker whose steps, like the spinners, inherit one CPU.
  ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
  SandboxWorker pinned(SandboxOptions{}, 1);
  Status started = pinned.Start();
  LoadLoops spinners(6, "while :; do :; done");
  ::sched_setaffinity(0, sizeof all, &all);
  ASSERT_TRUE(started.ok()) << started.ToString();
  // Perl itself is the step's process, as the simulator is: the wait counted is that process's
  // own (a shell in between would wait for its child asleep).
  auto run = [&](const std::string& program, uint32_t max_wall_ms) {
    JobRequest job;
    auto* step = job.add_steps();
    for (const char* a : {"perl", "-e"}) step->add_argv(a);
    step->add_argv(program);
    step->set_timeout_ms(2000);
    step->set_max_wall_ms(max_wall_ms);
    step->set_cpu_seconds(10);
    auto r = pinned.Run(job, 60s);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && r->steps_size() > 0 ? r->steps(0) : StepResult();
  };
  // User and system time together: the loop calls times() over and over, and on a machine whose
  // system calls are dear most of its time is the kernel's (user time alone once took 2 s).
  auto computes = run("do { ($u, $s) = times } until $u + $s >= 0.5; print qq(done\\n)", 20000);
  EXPECT_EQ(computes.outcome(), StepResult::EXITED)
      << computes.wall_ms() << " ms wall, " << computes.run_queue_wait_ms() << " ms waiting, "
      << computes.cpu_ms() << " ms CPU";
  EXPECT_NE(computes.output().find("done"), std::string::npos) << computes.output();
  EXPECT_GT(computes.wall_ms(), 2000u);  // what ended it before
  EXPECT_GT(computes.run_queue_wait_ms(), computes.wall_ms() / 2);

  auto sleeps = run("sleep 30", 10000);
  EXPECT_EQ(sleeps.outcome(), StepResult::TIMED_OUT);
  EXPECT_GE(sleeps.wall_ms(), 2000u);
  EXPECT_LT(sleeps.wall_ms(), 3500u);

  auto spins = run("1 while 1", 3000);
  EXPECT_EQ(spins.outcome(), StepResult::TIMED_OUT);
  EXPECT_GE(spins.wall_ms(), 3000u);
  EXPECT_LT(spins.wall_ms(), 4500u);
}

// System V shared memory outlived a job and filled the worker's memory cgroup for the samples
// after it. Creating it is refused; whatever a job still leaves is removed and counted.
TEST_F(SandboxTest, NoIpcObjectOutlivesAJob) {
  if (!Full()) GTEST_SKIP() << worker_->layers().Describe();
  const std::string make_shm =
      "my $id = shmget(0, 1 << 20, 0600 | 01000); print defined $id ? \"made\\n\" : "
      "\"refused\\n\";";
  JobRequest job;
  auto* step = job.add_steps();
  for (const char* a : {"perl", "-e"}) step->add_argv(a);
  step->add_argv(make_shm);
  step->set_timeout_ms(10000);
  step->set_cpu_seconds(10);
  auto r = worker_->Run(job, 60s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->steps_size(), 1);
  EXPECT_NE(r->steps(0).output().find("refused"), std::string::npos) << r->steps(0).output();
  EXPECT_EQ(r->ipc_objects_removed(), 0);
  auto ls = Sh("cat /proc/sysvipc/shm | wc -l");
  EXPECT_NE(ls.output().find("1"), std::string::npos) << ls.output();  // the header line only
}

// The filter is an allow-list: a call on no list (sync, nr 162 on x86-64) is "not implemented",
// a refused one (mount, 165) "not permitted", an ordinary one works.
TEST_F(SandboxTest, SystemCallsOutsideTheAllowListFail) {
  if (!Full()) GTEST_SKIP() << worker_->layers().Describe();
#if defined(__x86_64__)
  auto r =
      Sh("perl -e '$r = syscall(162); print \"sync=$r/\", $!+0, \"\\n\"; "
         "$r = syscall(165, 0, 0, 0, 0, 0); print \"mount=$r/\", $!+0, \"\\n\"; "
         "$r = syscall(39); print \"getpid=\", ($r > 0 ? \"ok\" : \"no\"), \"\\n\"'");
  EXPECT_NE(r.output().find("sync=-1/38"), std::string::npos) << r.output();  // ENOSYS
  EXPECT_NE(r.output().find("mount=-1/1"), std::string::npos) << r.output();  // EPERM
  EXPECT_NE(r.output().find("getpid=ok"), std::string::npos) << r.output();
#else
  GTEST_SKIP() << "system call numbers are x86-64's";
#endif
}

// A simulation step finds only what it is told to keep: not the sources it was compiled from.
TEST_F(SandboxTest, KeepOnlyHidesTheSourcesFromALaterStep) {
  JobRequest job;
  (*job.mutable_files())["test_x.sv"] = "secret testbench";
  (*job.mutable_files())["ref_x.sv"] = "secret reference";
  auto* build = job.add_steps();
  for (const char* a : {"sh", "-c", "mkdir obj && echo compiled > obj/sim && echo c > obj/x.cpp"})
    build->add_argv(a);
  build->set_timeout_ms(10000);
  auto* run = job.add_steps();
  for (const char* a : {"sh", "-c", "ls -a . obj; cat test_x.sv ref_x.sv; cat obj/sim"})
    run->add_argv(a);
  run->set_timeout_ms(10000);
  run->add_keep_only("obj/sim");
  job.add_collect("nothing-here");
  job.set_collect_max_bytes(100);
  auto r = worker_->Run(job, 60s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->steps_size(), 2);
  const std::string& out = r->steps(1).output();
  EXPECT_EQ(out.find("secret reference"), std::string::npos) << out;
  EXPECT_EQ(out.find("x.cpp"), std::string::npos) << out;
  EXPECT_EQ(out.find("secret testbench"), std::string::npos) << out;
  EXPECT_NE(out.find("compiled"), std::string::npos) << out;  // kept: obj/sim
  EXPECT_TRUE(r->collected().empty());
}

// A step reads an earlier step's output as its standard input (a pipe without the shell), never
// a link or a FIFO left under that name, and a name that is not flat refuses the whole job.
TEST_F(SandboxTest, StandardInputComesFromAScratchFileOnly) {
  JobRequest job;
  (*job.mutable_files())["given.txt"] = "given\n";
  auto add = [&](const std::string& script, const std::string& stdin_file) {
    auto* step = job.add_steps();
    for (const std::string& a : {std::string("sh"), std::string("-c"), script}) step->add_argv(a);
    step->set_timeout_ms(10000);
    step->set_stdin_file(stdin_file);
  };
  add("echo written > out.txt; ln -s /etc/passwd link.txt; mkfifo fifo.txt 2>/dev/null; cat", "");
  add("cat; echo end1", "out.txt");
  add("cat; echo end2", "given.txt");
  add("cat; echo end3", "link.txt");
  add("cat; echo end4", "fifo.txt");
  job.set_stop_on_failure(false);
  auto r = worker_->Run(job, 60s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->steps_size(), 5);
  EXPECT_EQ(r->steps(0).output(), "");  // no file named: /dev/null (FIFOs: where seccomp allows)
  EXPECT_EQ(r->steps(1).output(), "written\nend1\n");
  EXPECT_EQ(r->steps(2).output(), "given\nend2\n");
  for (int i : {3, 4}) {
    EXPECT_EQ(r->steps(i).exit_code(), 126) << r->steps(i).output();
    EXPECT_NE(r->steps(i).output().find("evald-sandbox: stdin"), std::string::npos)
        << r->steps(i).output();
    EXPECT_EQ(r->steps(i).output().find("root:"), std::string::npos) << r->steps(i).output();
  }
  JobRequest bad;
  auto* step = bad.add_steps();
  step->add_argv("true");
  step->set_stdin_file("../etc/passwd");
  auto refused = worker_->Run(bad, 10s);
  EXPECT_FALSE(refused.ok() && refused->error().empty());
  EXPECT_EQ(Sh("echo ok").output(), "ok\n");
}

TEST_F(SandboxTest, WritesOutsideTheScratchDirectoryFail) {
  std::string marker = "/tmp/evald-sandbox-marker-" + std::to_string(::getpid());
  ::unlink(marker.c_str());
  auto r = Sh("for p in " + marker + " /usr/evald-x /etc/evald-x /evald-x /dev/evald-x " +
              testing::SourceDir() +
              "/evald-x; do (echo pwned > $p) 2>/dev/null && echo WROTE $p; "
              "done; echo end");
  EXPECT_NE(r.output().find("end"), std::string::npos);
  if (Full()) {
    // /tmp inside is the job's own scratch: writing there is allowed and lands nowhere.
    EXPECT_EQ(r.output().find("WROTE /usr"), std::string::npos) << r.output();
    EXPECT_EQ(r.output().find("WROTE /etc"), std::string::npos) << r.output();
    EXPECT_EQ(r.output().find("WROTE /evald-x"), std::string::npos) << r.output();
  }
  EXPECT_FALSE(IsRegularFile(marker));
  EXPECT_FALSE(IsRegularFile(testing::SourceDir() + "/evald-x"));
}

TEST_F(SandboxTest, NoNetworkAndNoPrivilegedCalls) {
  if (!Full()) GTEST_SKIP();
  auto r = Sh(
      "perl -e 'use Socket; socket(my $s, PF_INET, SOCK_STREAM, 0) or die \"socket: $!\\n\"; print "
      "\"SOCKET OK\\n\"'; perl -e 'use Socket; socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "
      "\"unix: $!\\n\"'; grep Seccomp: /proc/self/status; unshare -U true && echo UNSHARED; "
      "mount -t tmpfs x /work/.tmp 2>/dev/null && echo MOUNTED; echo end");
  EXPECT_EQ(r.output().find("SOCKET OK"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("socket: Operation not permitted"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("unix: Operation not permitted"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("Seccomp:\t2"), std::string::npos) << r.output();
  EXPECT_EQ(r.output().find("UNSHARED"), std::string::npos) << r.output();
  EXPECT_EQ(r.output().find("MOUNTED"), std::string::npos) << r.output();
}

TEST_F(SandboxTest, TimeoutKillsTheWholeTree) {
  auto start = std::chrono::steady_clock::now();
  auto r = Sh("sleep 100 & (setsid sleep 100 &) ; sleep 100", 500);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.outcome(), StepResult::TIMED_OUT);
  EXPECT_LT(took, 5s);
  if (!Full()) return;
  // Nothing survives into the next job: only this job's own processes exist.
  auto ps = Sh("ls /proc | grep -c '^[0-9]'");
  int count = std::atoi(ps.output().c_str());
  EXPECT_GT(count, 0);
  EXPECT_LE(count, 4) << ps.output();
}

TEST_F(SandboxTest, ForkBombIsContained) {
  auto start = std::chrono::steady_clock::now();
  auto r = Sh("b() { b | b & }; b; sleep 3", 3000);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 15s);
  (void)r;
  // The worker (and the host) still run jobs normally afterwards.
  auto after = Sh("echo alive");
  EXPECT_EQ(after.exit_code(), 0);
  EXPECT_NE(after.output().find("alive"), std::string::npos);
}

TEST_F(SandboxTest, OutputFloodIsCut) {
  JobRequest job;
  auto* step = job.add_steps();
  step->add_argv("yes");
  step->add_argv("flood");
  step->set_timeout_ms(10000);
  step->set_max_output_bytes(64 * 1024);
  auto start = std::chrono::steady_clock::now();
  auto r = RunJob(job);
  EXPECT_EQ(r.outcome(), StepResult::OUTPUT_LIMIT);
  EXPECT_EQ(r.output().size(), 64u * 1024);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST_F(SandboxTest, MemoryFileSizeAndDiskLimits) {
  JobRequest job;
  auto* step = job.add_steps();
  for (const char* a : {"perl", "-e", "my $x = 'a' x (1536 * 1024 * 1024); print length($x)"})
    step->add_argv(a);
  step->set_timeout_ms(20000);
  step->set_address_space_bytes(512ull << 20);
  auto mem = RunJob(job);
  EXPECT_FALSE(mem.outcome() == StepResult::EXITED && mem.exit_code() == 0) << mem.output();
  EXPECT_LT(mem.max_rss_kb(), 600u * 1024);

  JobRequest big;
  auto* dd = big.add_steps();
  for (const char* a : {"dd", "if=/dev/zero", "of=big", "bs=1M", "count=64"}) dd->add_argv(a);
  dd->set_timeout_ms(20000);
  dd->set_file_size_bytes(1 << 20);
  auto fsz = RunJob(big);
  EXPECT_EQ(fsz.outcome(), StepResult::SIGNALED);
  EXPECT_EQ(fsz.signal(), SIGXFSZ);

  if (!Full()) return;
  // Many files, each under the file-size limit, still cannot fill the host's disk: the
  // scratch directory is a tmpfs of bounded size.
  auto disk =
      Sh("i=0; while [ $i -lt 64 ]; do dd if=/dev/zero of=f$i bs=1M count=8 2>/dev/null || "
         "{ echo FULL at $i; break; }; i=$((i+1)); done",
         60000);
  EXPECT_NE(disk.output().find("FULL"), std::string::npos) << disk.output();
}

TEST_F(SandboxTest, EveryJobGetsAFreshScratchDirectory) {
  auto first = Sh("ln -s /etc/passwd link; ln -s / root; echo left > behind; ls");
  EXPECT_NE(first.output().find("behind"), std::string::npos);
  auto second = Sh("ls -A | grep -v '^.tmp$'; echo end");
  EXPECT_EQ(second.output(), "end\n");
}

TEST_F(SandboxTest, RejectsHostileFileNames) {
  JobRequest job;
  (*job.mutable_files())["../escape"] = "x";
  job.add_steps()->add_argv("true");
  auto r = worker_->Run(job, 10s);
  EXPECT_FALSE(r.ok());
  // The worker keeps serving.
  EXPECT_EQ(Sh("echo ok").output(), "ok\n");
}

TEST_F(SandboxTest, OverrunningJobsKillTheWorkerWhichRestarts) {
  JobRequest job;
  auto* step = job.add_steps();
  step->add_argv("sleep");
  step->add_argv("30");
  step->set_timeout_ms(30000);
  auto r = worker_->Run(job, 300ms);  // the host's own deadline fires first
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(Sh("echo back").output(), "back\n");
}

TEST_F(SandboxTest, WorkersRunConcurrently) {
  SandboxWorker other(SandboxOptions{}, 1);
  ASSERT_TRUE(other.Start().ok());
  StepResult a, b;
  std::thread t([&] {
    JobRequest job;
    auto* s = job.add_steps();
    s->add_argv("sh");
    s->add_argv("-c");
    s->add_argv("sleep 0.3; echo A");
    s->set_timeout_ms(5000);
    auto r = other.Run(job, 10s);
    if (r.ok()) a = r->steps(0);
  });
  b = Sh("sleep 0.3; echo B");
  t.join();
  EXPECT_EQ(a.output(), "A\n");
  EXPECT_EQ(b.output(), "B\n");
}

TEST(DegradedSandbox, RunsWithoutNamespacesAndSaysSo) {
  SandboxOptions opts;
  opts.use_namespaces = false;
  SandboxWorker worker(opts, 0);
  ASSERT_TRUE(worker.Start().ok());
  const SandboxLayers& layers = worker.layers();
  EXPECT_FALSE(layers.mount_ns);
  EXPECT_FALSE(layers.fs_view);
  EXPECT_FALSE(layers.ContainsNativeCode());
  EXPECT_NE(layers.Describe().find("namespaces=OFF"), std::string::npos) << layers.Describe();
  EXPECT_NE(layers.Describe().find("native-code=refused"), std::string::npos);

  JobRequest job;
  (*job.mutable_files())["in.txt"] = "data\n";
  auto* step = job.add_steps();
  for (const char* a :
       {"sh", "-c", "cat in.txt; pwd; ln -s / escape; echo x > in.txt && echo WROTE"})
    step->add_argv(a);
  step->set_timeout_ms(10000);
  auto r = worker.Run(job, 30s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string out = r->steps(0).output();
  EXPECT_NE(out.find("data"), std::string::npos) << out;
  if (::geteuid() == 0) {
    EXPECT_EQ(out.find("WROTE"), std::string::npos) << out;  // inputs stay read-only
  }
  // The per-job directory is gone afterwards, removed without following the planted link.
  std::string dir = out.substr(out.find('\n') + 1);
  dir = dir.substr(0, dir.find('\n'));
  ASSERT_FALSE(dir.empty());
  EXPECT_FALSE(IsDirectory(dir)) << dir;
  EXPECT_TRUE(IsDirectory("/usr/bin"));

  // A process left running is killed with the job.
  JobRequest bg;
  auto* s2 = bg.add_steps();
  // A duration no other test uses: tests running beside this one (ctest -j) may have their
  // own sleeps under the same unprivileged uid.
  for (const char* a : {"sh", "-c", "(setsid sleep 59.731 &); echo started"}) s2->add_argv(a);
  s2->set_timeout_ms(5000);
  ASSERT_TRUE(worker.Run(bg, 30s).ok());
  if (::geteuid() == 0) {
    JobRequest check;
    auto* s3 = check.add_steps();
    for (const char* a :
         {"sh", "-c", "ps -u $(id -u) -o args= 2>/dev/null | grep -c '[s]leep 59.731' || true"})
      s3->add_argv(a);
    s3->set_timeout_ms(5000);
    auto c = worker.Run(check, 30s);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->steps(0).output(), "0\n") << c->steps(0).output();
  }
}

}  // namespace
}  // namespace evald
