// `evald eval` and `evald dataset check` as a user runs them: exit codes, the printed summary,
// the JSON report's fields, bad input reported by line with the rest still graded.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "base/file_io.h"
#include "base/hash.h"
#include "base/memory_info.h"
#include "base/py_text.h"
#include "evald/proto/compare.pb.h"
#include "evald/proto/eval.pb.h"
#include "fake_server.h"
#include "kernels/gguf/random_model.h"
#include "test_support.h"

namespace evald {
namespace {

using CommandResult = testing::ShellResult;  // output: stdout and stderr

CommandResult RunEvald(const std::string& args) {
  return testing::RunShell(std::string(EVALD_BINARY) + " " + args + " 2>&1");
}

class EvalCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/tmp/evald-cli-test-" + RandomHex(6);
    ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string dir_;
};

v1::EvalReport ReadReport(const std::string& path) {
  v1::EvalReport report;
  auto text = ReadFileBounded(path);
  EXPECT_TRUE(text.ok());
  if (text.ok()) {
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(*text, &report).ok());
  }
  return report;
}

TEST_F(EvalCommand, GradesTheBuiltinSamplesAndWritesTheReport) {
  std::string json = dir_ + "/report.json";
  auto r =
      RunEvald("eval --dataset " + testing::BuiltinDataset() + " --task spec-to-rtl --samples " +
               testing::BuiltinDataset() + "/samples_spec-to-rtl.jsonl --k 1,5 --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("pass@1"), std::string::npos);
  EXPECT_NE(r.output.find("95% CI"), std::string::npos);
  EXPECT_NE(r.output.find("sandbox layers:"), std::string::npos);
  EXPECT_NE(r.output.find("benchmark verilog-eval-v2 2.0, task spec-to-rtl: 14 problems"),
            std::string::npos)
      << r.output;
  v1::EvalReport report = ReadReport(json);
  ASSERT_EQ(report.samples_size(), 14 * 6);
  EXPECT_EQ(report.problems_size(), 14);
  EXPECT_EQ(report.benchmark().problems(), 14);
  // The generator writes six samples per problem: right (markers), right (fence), wrong logic,
  // syntax error, right (no markers, prose after), [BEGIN] without [DONE].
  for (const auto& s : report.samples()) {
    int slot = s.index();
    const char* want[] = {".", ".", "R", "S", ".", "m"};
    if (s.problem() == "Bi07_dff8_sync_reset" && slot == 2) {
      EXPECT_EQ(s.verdict(), "r");  // its wrong version uses an asynchronous reset
    } else {
      EXPECT_EQ(s.verdict(), want[slot]) << s.problem() << " #" << slot << ": " << s.detail();
    }
    EXPECT_EQ(s.passed(), s.verdict() == ".");
  }
  EXPECT_EQ(report.samples(0).extraction().method(), "markers");
  EXPECT_EQ(report.samples(1).extraction().method(), "fence");
  EXPECT_EQ(report.samples(5).extraction().method(), "markers_unterminated");
  for (const auto& p : report.problems()) {
    EXPECT_EQ(p.n(), 6);
    EXPECT_EQ(p.c(), 3);
    EXPECT_DOUBLE_EQ(p.pass_at().at("1"), 0.5);
    EXPECT_DOUBLE_EQ(p.pass_at().at("5"), 1.0);
  }
  EXPECT_DOUBLE_EQ(report.summary().pass_at().at("1"), 0.5);
  EXPECT_TRUE(report.summary().ci95().count("5"));
  EXPECT_DOUBLE_EQ(report.summary().benchmark_pass_rate(), 50.0);
  // pass@k per design category: every problem in one, each category's figures its problems'.
  int in_categories = 0;
  for (const auto& [category, score] : report.summary().by_category()) {
    in_categories += score.problems();
    EXPECT_DOUBLE_EQ(score.pass_at().at("1"), 0.5) << category;
    EXPECT_TRUE(score.ci95().count("5")) << category;
    EXPECT_NE(r.output.find("  " + category), std::string::npos) << r.output;
  }
  EXPECT_EQ(in_categories, 14);
  EXPECT_TRUE(report.summary().by_category().count("fsm"));
  for (const auto& p : report.problems()) EXPECT_FALSE(p.category().empty()) << p.problem();
  EXPECT_NE(r.output.find("by design category (95% CI over its problems):"), std::string::npos);
  EXPECT_NE(r.output.find("calibrating 14/14 references"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("grading 84/84 samples"), std::string::npos) << r.output;
}

TEST_F(EvalCommand, BadLinesAreReportedAndTheRestIsGraded) {
  std::string samples = dir_ + "/samples.jsonl";
  std::string good =
      "module TopModule(input a, input b, output out); assign out = a & b; endmodule";
  std::string text = "{\"problem\": \"Bi01_and_gate\", \"code\": \"" + good + "\"}\n" +
                     "{\"problem\": \"Bi01_and_gate\", \"code\": \"" + good +
                     "\"}\n" +  // duplicate code
                     "this is not json\n" + "{\"problem\": \"NoSuchProblem\", \"code\": \"x\"}\n" +
                     "{\"problem\": \"Bi01_and_gate\"}\n" +
                     "{\"problem\": \"Bi01_and_gate\", \"index\": 0, \"code\": \"x\"}\n";
  ASSERT_TRUE(WriteFileAtomic(samples, text).ok());
  std::string json = dir_ + "/r.json";
  auto r = RunEvald("eval --dataset " + testing::BuiltinDataset() + " --samples " + samples +
                    " --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("line 3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("line 4"), std::string::npos);
  EXPECT_NE(r.output.find("line 5"), std::string::npos);
  EXPECT_NE(r.output.find("line 6"), std::string::npos);
  v1::EvalReport report = ReadReport(json);
  ASSERT_EQ(report.samples_size(), 2);
  EXPECT_TRUE(report.samples(0).passed());
  EXPECT_TRUE(report.samples(1).passed());
  EXPECT_FALSE(report.samples(0).deduplicated());
  EXPECT_TRUE(report.samples(1).deduplicated());
  EXPECT_EQ(report.summary().simulations(), 2);  // the calibration and one sample
  EXPECT_EQ(report.input_errors_size(), 4);
}

// The poisoning sequence: every hostile design of the corpus graded by one sandbox (--jobs 1)
// into a store, right designs after them. The right ones pass; a second evald on the same store
// serves the same letters (nothing wrong was cached), and a fresh store agrees.
TEST_F(EvalCommand, HostileSamplesPoisonNeitherTheSamplesAfterThemNorTheCache) {
  std::string jsonl;
  for (const auto& e :
       std::filesystem::directory_iterator(testing::SourceDir() + "/tests/hostile")) {
    std::string code = *ReadFileBounded(e.path().string());
    if (code.find("// simulators: verilator") != std::string::npos) continue;
    if (code.find("// expect: .") != std::string::npos) continue;  // a right design
    code = py::ReplaceAll(py::ReplaceAll(py::ReplaceAll(code, "@MARKER@", dir_ + "/marker"),
                                         "@SECRET@", dir_ + "/secret"),
                          "@SOURCE@", dir_);
    v1::SampleLine line;
    line.set_problem("Bi01_and_gate");
    line.set_code(code);
    std::string out;
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(line, &out).ok());
    jsonl += out + "\n";
  }
  for (int i = 0; i < 3; ++i)
    jsonl +=
        "{\"problem\": \"Bi01_and_gate\", \"code\": \"module TopModule(input a, input b, "
        "output out); // right " +
        std::to_string(i) + "\\n assign out = a & b;\\nendmodule\\n\"}\n";
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/s.jsonl", jsonl).ok());
  auto letters = [&](const std::string& store, const std::string& json) {
    auto r = RunEvald("eval --dataset " + testing::BuiltinDataset() + " --jobs 1 --data " + store +
                      " --samples " + dir_ + "/s.jsonl --json " + json);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::string out;
    v1::EvalReport report = ReadReport(json);
    for (const auto& s : report.samples()) out += s.verdict();
    return out;
  };
  std::string first = letters(dir_ + "/store", dir_ + "/a.json");
  ASSERT_GE(first.size(), 20u);
  EXPECT_EQ(first.substr(first.size() - 3), "...") << first;     // the right designs after them
  EXPECT_EQ(first.find('.'), first.size() - 3) << first;         // and no hostile one passes
  EXPECT_EQ(letters(dir_ + "/store", dir_ + "/b.json"), first);  // served from the cache
  EXPECT_GT(ReadReport(dir_ + "/b.json").summary().cache_hits(), 0);
  // Graded afresh: the same letters, except that a design exhausting a resource may hit its
  // memory or output limit (L) on one run and its CPU-time limit (T) on another; which one comes
  // first depends on the machine's speed at that moment, not on what was cached.
  auto limit_blind = [](std::string s) {
    std::replace(s.begin(), s.end(), 'L', 'T');
    return s;
  };
  EXPECT_EQ(limit_blind(letters(dir_ + "/fresh", dir_ + "/c.json")), limit_blind(first));
}

// Inputs that are not what they claim: a FIFO as the samples file (refused, not a hang), a
// symbolic link as the report (refused, its target untouched), a 15 MB design (a verdict, in
// bounded memory).
TEST_F(EvalCommand, HostileHostInputsGetClearErrorsInBoundedMemory) {
  ASSERT_EQ(::mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
  auto fifo =
      RunEvald("eval --dataset " + testing::BuiltinDataset() + " --samples " + dir_ + "/fifo");
  EXPECT_EQ(fifo.exit_code, 2) << fifo.output;
  EXPECT_NE(fifo.output.find("not a regular file"), std::string::npos) << fifo.output;

  std::string good =
      "{\"problem\": \"Bi01_and_gate\", \"code\": \"module TopModule(input a, "
      "input b, output out); assign out = a & b; endmodule\"}\n";
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/good.jsonl", good).ok());
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/victim", "keep").ok());
  ASSERT_EQ(::symlink((dir_ + "/victim").c_str(), (dir_ + "/r.json").c_str()), 0);
  auto link = RunEvald("eval --dataset " + testing::BuiltinDataset() + " --samples " + dir_ +
                       "/good.jsonl --json " + dir_ + "/r.json");
  EXPECT_EQ(link.exit_code, 2) << link.output;
  EXPECT_EQ(*ReadFileBounded(dir_ + "/victim"), "keep");

  std::string huge =
      "{\"problem\": \"Bi01_and_gate\", \"code\": \"module TopModule(input a, "
      "input b, output out); assign out = a & b;";
  for (int i = 0; i < 1500000; ++i) huge += " wire w;";  // ~15 MB of tokens
  huge += " endmodule\"}\n";
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/huge.jsonl", huge).ok());
  // Run it as a child of our own, so that its peak memory (and its sandbox's) is its own.
  pid_t pid = ::fork();
  if (pid == 0) {
    std::string cmd = std::string(EVALD_BINARY) + " eval --dataset " + testing::BuiltinDataset() +
                      " --samples " + dir_ + "/huge.jsonl --json " + dir_ +
                      "/h.json >/dev/null 2>&1";
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  ASSERT_EQ(::wait4(pid, &status, 0, &usage), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_LT(usage.ru_maxrss, 512 * 1024) << "KiB";
  auto report = ReadReport(dir_ + "/h.json");
  ASSERT_EQ(report.samples_size(), 1);
  EXPECT_FALSE(report.samples(0).passed());
}

TEST_F(EvalCommand, ClearErrorsForUnusableArguments) {
  auto no_file = RunEvald("eval --dataset " + testing::BuiltinDataset() + " --samples " + dir_ +
                          "/missing.jsonl");
  EXPECT_EQ(no_file.exit_code, 2);
  EXPECT_NE(no_file.output.find("missing.jsonl"), std::string::npos) << no_file.output;
  auto no_ds = RunEvald("eval --dataset " + dir_ + "/nowhere --samples x.jsonl");
  EXPECT_EQ(no_ds.exit_code, 2);
  EXPECT_NE(no_ds.output.find("nowhere"), std::string::npos) << no_ds.output;
  auto bad_k = RunEvald("eval --dataset " + testing::BuiltinDataset() + " --samples x --k 1,zero");
  EXPECT_EQ(bad_k.exit_code, 2);
  EXPECT_NE(bad_k.output.find("--k"), std::string::npos);
  auto bad_sim =
      RunEvald("eval --dataset " + testing::BuiltinDataset() + " --samples x --simulator vcs");
  EXPECT_EQ(bad_sim.exit_code, 2);
  EXPECT_NE(bad_sim.output.find("vcs"), std::string::npos);
  auto bad_task =
      RunEvald("eval --dataset " + testing::BuiltinDataset() + " --samples x --task foo");
  EXPECT_EQ(bad_task.exit_code, 2);
}

TEST_F(EvalCommand, DatasetCheckOnTheBuiltinSet) {
  std::string json = dir_ + "/check.json";
  auto r = RunEvald("dataset check --dataset " + testing::BuiltinDataset() +
                    " --task code-complete-iccad2023 --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("14 problems: 14 gradable"), std::string::npos) << r.output;
  v1::DatasetCheckReport report;
  auto text = ReadFileBounded(json);
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*text, &report).ok());
  EXPECT_EQ(report.gradable(), 14);
}

TEST_F(EvalCommand, CompareAndGateOnReports) {
  // Baseline: the built-in samples. Candidate: only the wrong-logic ones.
  std::string base_json = dir_ + "/base.json", cand_json = dir_ + "/cand.json";
  std::string samples = testing::BuiltinDataset() + "/samples_spec-to-rtl.jsonl";
  ASSERT_EQ(RunEvald("eval --dataset " + testing::BuiltinDataset() + " --samples " + samples +
                     " --json " + base_json)
                .exit_code,
            0);
  auto all = ReadFileBounded(samples);
  ASSERT_TRUE(all.ok());
  std::string wrong;
  int line_no = 0;
  for (size_t pos = 0; pos < all->size();) {
    size_t end = all->find('\n', pos);
    if (line_no++ % 6 == 2) wrong += all->substr(pos, end - pos) + "\n";
    pos = end + 1;
  }
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/wrong.jsonl", wrong).ok());
  ASSERT_EQ(RunEvald("eval --dataset " + testing::BuiltinDataset() + " --samples " + dir_ +
                     "/wrong.jsonl --json " + cand_json)
                .exit_code,
            0);

  auto cmp = RunEvald("compare " + base_json + " " + cand_json + " --json " + dir_ + "/cmp.json");
  ASSERT_EQ(cmp.exit_code, 0) << cmp.output;
  EXPECT_NE(cmp.output.find("lost by B"), std::string::npos) << cmp.output;
  EXPECT_NE(cmp.output.find("is worse than"), std::string::npos) << cmp.output;

  auto pass = RunEvald("gate --report " + base_json + " --min 'pass@1>=0.45,pass@5>=0.9' --junit " +
                       dir_ + "/j.xml --markdown " + dir_ + "/g.md");
  EXPECT_EQ(pass.exit_code, 0) << pass.output;
  EXPECT_NE(pass.output.find("gate: PASS"), std::string::npos);
  auto junit = ReadFileBounded(dir_ + "/j.xml");
  ASSERT_TRUE(junit.ok());
  EXPECT_NE(junit->find("failures=\"0\""), std::string::npos);
  EXPECT_NE(junit->find("Bi01_and_gate"), std::string::npos);

  auto regress = RunEvald("gate --report " + cand_json + " --baseline " + base_json);
  EXPECT_EQ(regress.exit_code, 1) << regress.output;
  EXPECT_NE(regress.output.find("gate: FAIL"), std::string::npos);
  auto too_low = RunEvald("gate --report " + base_json + " --min 'pass@1>=0.9'");
  EXPECT_EQ(too_low.exit_code, 1);
  EXPECT_NE(too_low.output.find("gate: FAIL"), std::string::npos);
  auto error = RunEvald("gate --report " + dir_ + "/none.json --min 'pass@1>=0.1'");
  EXPECT_EQ(error.exit_code, 2);
  EXPECT_NE(error.output.find("gate: ERROR"), std::string::npos);
  EXPECT_EQ(RunEvald("gate --report " + base_json).exit_code, 2);  // nothing to gate on

  // The strict metric: the default grading checks passes formally, so both reports have it; a
  // report graded with --formal off has none, and asking for it is an error, not a quiet pass.
  auto strict = RunEvald("gate --report " + base_json + " --min 'pass@1>=0.45' --metric strict");
  EXPECT_EQ(strict.exit_code, 0) << strict.output;
  auto strict_cmp = RunEvald("compare " + base_json + " " + cand_json + " --metric strict");
  EXPECT_EQ(strict_cmp.exit_code, 0) << strict_cmp.output;
  EXPECT_NE(strict_cmp.output.find("metric: strict"), std::string::npos) << strict_cmp.output;
  std::string plain_json = dir_ + "/plain.json";
  ASSERT_EQ(RunEvald("eval --dataset " + testing::BuiltinDataset() + " --samples " + samples +
                     " --formal off --json " + plain_json)
                .exit_code,
            0);
  auto no_strict = RunEvald("gate --report " + plain_json + " --min 'pass@1>=0.1' --metric strict");
  EXPECT_EQ(no_strict.exit_code, 2) << no_strict.output;
  EXPECT_NE(no_strict.output.find("no formal checks"), std::string::npos) << no_strict.output;
  EXPECT_EQ(RunEvald("compare " + base_json + " " + cand_json + " --metric best").exit_code, 2);
  EXPECT_EQ(RunEvald("eval --dataset " + testing::BuiltinDataset() + " --samples " + samples +
                     " --formal maybe")
                .exit_code,
            2);
}

TEST_F(EvalCommand, DatasetAuditOnTwoBuiltinProblems) {
  std::string json = dir_ + "/audit.json";
  auto r = RunEvald("dataset audit --dataset " + testing::BuiltinDataset() +
                    " --problems Bi01_and_gate,Bi13_lfsr5 --json " + json);
  if (r.output.find("need yosys") != std::string::npos) GTEST_SKIP() << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Bi13_lfsr5"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("formally different"), std::string::npos) << r.output;
  v1::DatasetAuditReport report;
  auto text = ReadFileBounded(json);
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*text, &report).ok());
  ASSERT_EQ(report.problems_size(), 2);
  EXPECT_GT(report.different(), 0);
  EXPECT_EQ(
      RunEvald("dataset audit --dataset " + testing::BuiltinDataset() + " --problems NoSuchProblem")
          .exit_code,
      2);
}

TEST_F(EvalCommand, PrintsTheBenchmarksPromptsAsJsonl) {
  auto r = RunEvald("dataset prompts --dataset " + testing::BuiltinDataset() +
                    " --task spec-to-rtl --problem Bi03_adder4 --rules");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  v1::PromptLine line;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(r.output.substr(0, r.output.find('\n')), &line)
          .ok())
      << r.output;
  EXPECT_EQ(line.problem(), "Bi03_adder4");
  EXPECT_NE(line.prompt().find("\nQuestion:\n"), std::string::npos);
  EXPECT_NE(line.prompt().find("additional rules"), std::string::npos);
  EXPECT_TRUE(line.prompt().ends_with("\nAnswer:\n"));
  EXPECT_NE(line.system().find("Verilog RTL designer"), std::string::npos);
  auto all = RunEvald("dataset prompts --dataset " + testing::BuiltinDataset() +
                      " --task code-complete-iccad2023");
  ASSERT_EQ(all.exit_code, 0);
  EXPECT_EQ(std::count(all.output.begin(), all.output.end(), '\n'), 14);
  EXPECT_EQ(
      RunEvald("dataset prompts --dataset " + testing::BuiltinDataset() + " --shots 2").exit_code,
      2);
  // Prompt styles are RTLLM's: refused on verilog-eval's prompts, and an unknown one by name.
  auto styled =
      RunEvald("dataset prompts --dataset " + testing::BuiltinDataset() + " --prompt-style system");
  EXPECT_EQ(styled.exit_code, 2);
  EXPECT_NE(styled.output.find("is for RTLLM"), std::string::npos) << styled.output;
  auto unknown =
      RunEvald("dataset prompts --dataset " + testing::BuiltinDataset() + " --prompt-style nope");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("unknown prompt style 'nope'"), std::string::npos)
      << unknown.output;
  EXPECT_EQ(RunEvald("dataset prompts --dataset " + testing::BuiltinDataset() + " --problem Nope")
                .exit_code,
            2);
}

// `evald run --endpoint` is its own operator: the endpoint it names is reachable (loopback
// included) and its --api-key-env / --api-key-file is the key sent, as a bearer token only.
TEST_F(EvalCommand, RunAgainstAnEndpointSendsTheKeyItNames) {
  testing::FakeServer server([](const HttpRequest& req, int) {
    return testing::Reply(
        req, boost::beast::http::status::ok,
        "data: {\"choices\":[{\"index\":0,\"text\":\"[BEGIN]\\nmodule TopModule(input a, input b, "
        "output out); assign out = a & b; endmodule\\n[DONE]\",\"finish_reason\":\"stop\"}]}\n\n"
        "data: [DONE]\n\n",
        "text/event-stream");
  });
  ::setenv("EVALD_TEST_CLI_KEY", "sk-from-the-cli-env", 1);
  auto r = RunEvald("run --endpoint " + server.url() +
                    " --model-name m --api-key-env EVALD_TEST_CLI_KEY --problems Bi01_and_gate "
                    "--formal off --json " +
                    dir_ + "/ep.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadReport(dir_ + "/ep.json").summary().pass_at().at("1"), 1.0);
  ASSERT_FALSE(server.auth().empty());
  EXPECT_EQ(server.auth().front(), "Bearer sk-from-the-cli-env");
  EXPECT_EQ(r.output.find("sk-from-the-cli-env"), std::string::npos) << r.output;
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/key", "sk-from-a-file\n").ok());
  auto f = RunEvald("run --endpoint " + server.url() + " --model-name m --api-key-file " + dir_ +
                    "/key --problems Bi01_and_gate --formal off");
  ASSERT_EQ(f.exit_code, 0) << f.output;
  EXPECT_EQ(server.auth().back(), "Bearer sk-from-a-file");
}

// `evald run` without a daemon: recorded completions give the same verdicts as `evald eval` on
// the same file; the decoding core samples, and the report carries its serving metrics.
TEST_F(EvalCommand, RunFromRecordedCompletionsMatchesEval) {
  const std::string samples = testing::BuiltinDataset() + "/samples_spec-to-rtl.jsonl";
  auto e = RunEvald("eval --dataset " + testing::BuiltinDataset() +
                    " --task spec-to-rtl --samples " + samples + " --json " + dir_ + "/e.json");
  ASSERT_EQ(e.exit_code, 0) << e.output;
  auto r = RunEvald("run --recorded " + samples +
                    " --problems Bi01_and_gate,Bi02_mux2_byte,Bi03_adder4 --n 5 --json " + dir_ +
                    "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto eval = ReadReport(dir_ + "/e.json"), run = ReadReport(dir_ + "/r.json");
  ASSERT_EQ(run.problems_size(), 3);
  for (const auto& p : run.problems()) {
    auto it = std::find_if(eval.problems().begin(), eval.problems().end(),
                           [&](const v1::ProblemResult& q) { return q.problem() == p.problem(); });
    ASSERT_NE(it, eval.problems().end());
    EXPECT_EQ(p.n(), 5);
    // The first five samples of the file, graded the same way.
    int c = 0;
    for (const auto& s : eval.samples())
      if (s.problem() == p.problem() && s.index() < 5 && s.passed()) ++c;
    EXPECT_EQ(p.c(), c) << p.problem();
  }
  EXPECT_EQ(run.serving().backend(), "recorded");
  // A recorded file lacking samples: a clear error naming what is missing, exit 2.
  auto missing = RunEvald("run --recorded " + samples + " --problems Bi01_and_gate --n 40");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("no recorded completion for Bi01_and_gate index"),
            std::string::npos)
      << missing.output;
}

TEST_F(EvalCommand, RunSamplesAGgufWithTheCoreAndReportsServingMetrics) {
  std::string model = std::string(EVALD_SHARED_DIR) + "/models/stories260K-q8_0.gguf";
  auto r = RunEvald("run --model " + model +
                    " --problems Bi01_and_gate --preset sampled --max-tokens 24 --k 1,5,20 "
                    "--json " +
                    dir_ + "/r.json --data " + dir_ + "/store");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("TTFT mean/median/p99"), std::string::npos) << r.output;
  // Progress by phase (a log here: no terminal): the reference, the 20 samples drawn, graded.
  const size_t calibrating = r.output.find("calibrating 1/1 references");
  const size_t sampling = r.output.find("sampling 20/20 samples");
  const size_t grading = r.output.find("grading 20/20 samples");
  EXPECT_NE(calibrating, std::string::npos) << r.output;
  EXPECT_NE(sampling, std::string::npos) << r.output;
  EXPECT_NE(grading, std::string::npos) << r.output;
  EXPECT_LT(calibrating, grading);
  auto report = ReadReport(dir_ + "/r.json");
  ASSERT_EQ(report.problems_size(), 1);
  EXPECT_EQ(report.problems(0).n(), 20);  // the preset's n
  EXPECT_EQ(report.serving().backend(), "core");
  EXPECT_EQ(report.serving().completed_requests(), 1);  // 20 samples, one batched request
  EXPECT_GT(report.serving().total_output_tokens(), 0);
  EXPECT_GT(report.serving().ttft().mean_ms(), 0);
  auto bad = RunEvald("run --model " + dir_ + "/missing.gguf --problems Bi01_and_gate");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("not a readable file"), std::string::npos) << bad.output;
  auto corrupt_path = dir_ + "/corrupt.gguf";
  ASSERT_TRUE(WriteFileAtomic(corrupt_path, "GGUF\x03garbage").ok());
  auto corrupt = RunEvald("run --model " + corrupt_path + " --problems Bi01_and_gate");
  EXPECT_EQ(corrupt.exit_code, 2);
  EXPECT_NE(corrupt.output.find("FAILED"), std::string::npos) << corrupt.output;
}

// `evald run --drift-base`: the run measures its file's drift from the base file after
// grading, prints it under its pass@k and keeps it in its report; a missing base file or an
// unknown --drift-completions is refused before sampling.
TEST_F(EvalCommand, RunsWithADriftBaseReportTheirDrift) {
  const std::string models = std::string(EVALD_SHARED_DIR) + "/models/";
  const std::string common =
      "run --model " + models + "stories260K-q4_0.gguf --problems Bi01_and_gate --max-tokens 16 ";
  auto r = RunEvald(common + "--drift-base " + models + "stories260K-f32.gguf --json " + dir_ +
                    "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t pass = r.output.find("pass@1"), drift = r.output.find("drift from ");
  ASSERT_NE(drift, std::string::npos) << r.output;
  EXPECT_LT(pass, drift);
  EXPECT_NE(r.output.find("mean KL"), std::string::npos) << r.output;
  auto report = ReadReport(dir_ + "/r.json");
  ASSERT_EQ(report.drift().variants_size(), 1);
  EXPECT_GT(report.drift().variants(0).overall().tokens(), 0);
  EXPECT_EQ(report.drift().base(), std::filesystem::canonical(models + "stories260K-f32.gguf"));
  auto missing = RunEvald(common + "--drift-base " + dir_ + "/missing.gguf");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("not a readable file"), std::string::npos) << missing.output;
  auto bad = RunEvald(common + "--drift-base " + models + "stories260K-f32.gguf " +
                      "--drift-completions everything");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("samples or references"), std::string::npos) << bad.output;
}

// A run on a chat checkpoint of the core renders the system and user turns in the chat format
// and records which; stored generations of the plain prompt do not answer it. A model without a
// template and no --chat-format fails before sampling, saying what to do.
TEST_F(EvalCommand, ChatRunsOnTheCoreRecordTheirChatFormat) {
  std::string model = std::string(EVALD_SHARED_DIR) + "/models/stories260K-q8_0.gguf";
  const std::string common = " --problems Bi01_and_gate --max-tokens 8 --data " + dir_ + "/store";
  auto plain = RunEvald("run --model " + model + common + " --json " + dir_ + "/plain.json");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(ReadReport(dir_ + "/plain.json").serving().prompt_format(), "completions");
  auto chat = RunEvald("run --model " + model + common + " --chat-format gemma --json " + dir_ +
                       "/chat.json");
  ASSERT_EQ(chat.exit_code, 0) << chat.output;
  EXPECT_NE(chat.output.find("chat: gemma"), std::string::npos) << chat.output;
  auto report = ReadReport(dir_ + "/chat.json");
  EXPECT_EQ(report.serving().prompt_format(), "chat: gemma (--chat-format)");
  EXPECT_EQ(report.serving().cached_samples(), 0) << "the plain run's generation is not reused";
  EXPECT_GT(report.serving().total_input_tokens(),
            ReadReport(dir_ + "/plain.json").serving().total_input_tokens());
  auto no_template = RunEvald("run --model " + model + common + " --api chat");
  EXPECT_EQ(no_template.exit_code, 2);
  EXPECT_NE(no_template.output.find("no tokenizer.chat_template"), std::string::npos)
      << no_template.output;
  auto unknown = RunEvald("run --model " + model + common + " --chat-format vicuna");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("unknown chat format 'vicuna'"), std::string::npos)
      << unknown.output;
}

// `evald bench plan-memory`: a 31B Gemma 4 Q4_0 checkpoint's memory from its layout alone (its
// weights never exist here), and a real file's from its metadata; bad input refused.
TEST_F(EvalCommand, PlanMemoryEstimatesA31BGemma4BeforeLoading) {
  auto r = RunEvald("bench plan-memory --layout gemma4-31b --context 8192");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("30.70 B parameters"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("50 sliding (window 1024)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("17.27 GB"), std::string::npos) << "Q4_0 weights: " << r.output;
  // Sliding layers keep a ring of 1039 positions, full layers all 8192.
  EXPECT_NE(r.output.find("3.04 GB for n=1 x 8192 positions"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("keep 1039 positions"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("this machine has"), std::string::npos) << r.output;
  auto q8 = RunEvald("bench plan-memory --layout gemma4-31b --kv-cache q8_0 --context 8192");
  EXPECT_NE(q8.output.find("0.81 GB for n=1"), std::string::npos) << q8.output;
  // 20 samples of Llama 2 7B (1 MiB of F32 cache per position) sharing a 1,000-position prompt:
  // 1,000 + 20 x 1,048 positions held, where 20 x 2,048 would be 42.95 GB.
  auto shared =
      RunEvald("bench plan-memory --layout llama2-7b --n 20 --context 2048 --prompt 1000");
  EXPECT_NE(shared.output.find("23.03 GB for n=20 x 2048 positions, the first 1000 a prompt held "
                               "once"),
            std::string::npos)
      << shared.output;
  EXPECT_EQ(RunEvald("bench plan-memory --layout llama2-7b --n 20 --context 2048 --prompt 2048")
                .exit_code,
            2);
  auto file = RunEvald("bench plan-memory --model " + std::string(EVALD_SHARED_DIR) +
                       "/models/stories260K-q8_0.gguf --context 256");
  ASSERT_EQ(file.exit_code, 0) << file.output;
  EXPECT_NE(file.output.find("llama, 5 layers of 64"), std::string::npos) << file.output;
  EXPECT_EQ(RunEvald("bench plan-memory --layout gpt5").exit_code, 2);
  EXPECT_EQ(RunEvald("bench plan-memory --model " + dir_ + "/missing.gguf").exit_code, 2);
}

// `evald generate --logprobs K`: one line per generated token, the chosen token's log-prob
// never above the likeliest one's, and greedy decoding choosing the likeliest.
TEST_F(EvalCommand, GenerateListsEveryTokensLogprobs) {
  std::string model = std::string(EVALD_SHARED_DIR) + "/models/stories260K-q8_0.gguf";
  auto r = RunEvald("generate --model " + model +
                    " --prompt 'Once upon a time' --max-tokens 6 --logprobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t head = r.output.find("log-probs (position, token, log p, then the likeliest");
  ASSERT_NE(head, std::string::npos) << r.output;
  std::istringstream lines(r.output.substr(r.output.find('\n', head) + 1));
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
    ASSERT_EQ(cells.size(), 7u) << line;
    EXPECT_EQ(std::stoi(cells[0]), rows++);
    EXPECT_EQ(cells[1], cells[3]) << "greedy takes the likeliest: " << line;
    EXPECT_EQ(cells[2], cells[4]);
    EXPECT_LE(std::stod(cells[6]), std::stod(cells[4]));
    EXPECT_LE(std::stod(cells[4]), 0);
  }
  EXPECT_EQ(rows, 6) << r.output;
  EXPECT_NE(RunEvald("generate --model " + model + " --prompt x --logprobs 21").exit_code, 0);
}

// `evald generate --print-prompt`: the text the model reads, the chat rendered by the file's own
// template (a random-weight file carrying one) or by --chat-format; no template and no format is
// an error saying what to do.
TEST_F(EvalCommand, GeneratePrintsTheRenderedPrompt) {
  const std::string stories = std::string(EVALD_SHARED_DIR) + "/models/stories260K-q8_0.gguf";
  auto named = RunEvald("generate --model " + stories +
                        " --system 'Be brief.' --prompt 'Once upon a time' --chat-format chatml "
                        "--print-prompt --max-tokens 1");
  ASSERT_EQ(named.exit_code, 0) << named.output;
  EXPECT_NE(named.output.find("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nOnce "
                              "upon a time<|im_end|>\n<|im_start|>assistant\n\n--- end of prompt"),
            std::string::npos)
      << named.output;
  kernels::RandomModelShape shape;
  shape.architecture = "gemma";
  shape.chat_template =
      "{{ bos_token }}{% for m in messages %}<start_of_turn>{{ m['role'] }}\n{{ m['content'] | "
      "trim "
      "}}<end_of_turn>\n{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif "
      "%}";
  const std::string path = dir_ + "/templated.gguf";
  ASSERT_TRUE(kernels::WriteRandomModel(shape, stories, path).ok());
  auto own = RunEvald("generate --model " + path +
                      " --chat --prompt '  Write a counter.  ' --print-prompt --max-tokens 1");
  ASSERT_EQ(own.exit_code, 0) << own.output;
  EXPECT_NE(own.output.find("<start_of_turn>user\nWrite a counter.<end_of_turn>\n<start_of_turn>"
                            "model\n\n--- end of prompt"),
            std::string::npos)
      << own.output;
  auto none = RunEvald("generate --model " + stories + " --chat --prompt x --max-tokens 1");
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.output.find("--chat-format"), std::string::npos) << none.output;
}

// `evald generate` asking for more cache than the machine has: a clear error and exit 2 (it
// used to end in std::bad_alloc and abort).
TEST_F(EvalCommand, GenerateRefusesSamplesThatCouldOutgrowTheMemory) {
  const int64_t available = AvailableMemoryBytes();  // 131 GB would fit, and run for days
  if (available <= 0 || available >= 120'000'000'000) GTEST_SKIP() << "this machine's memory";
  const std::string stories = std::string(EVALD_SHARED_DIR) + "/models/stories260K-f32.gguf";
  kernels::RandomModelShape shape;  // a million positions, 1 KiB of F32 cache each
  shape.dim = 64;
  shape.heads = 4;
  shape.kv_heads = 4;
  shape.hidden = 64;
  shape.context = 1 << 20;
  const std::string path = dir_ + "/long-context.gguf";
  ASSERT_TRUE(kernels::WriteRandomModel(shape, stories, path).ok());
  auto r = RunEvald("generate --model " + path +
                    " --prompt Once --n 128 --max-tokens 1000000 --temperature 0.8");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("of KV cache (f32)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("bad_alloc"), std::string::npos) << r.output;
}

// `evald drift` on two built-in problems' references: Q4_0 drifts further from F32 than Q8_0
// does, on every figure; the JSON holds each problem and category; a file of another vocabulary
// is refused.
TEST_F(EvalCommand, DriftOfQuantizedFilesOnTheBenchmarksPrompts) {
  const std::string models = std::string(EVALD_SHARED_DIR) + "/models/";
  const std::string json = dir_ + "/drift.json";
  auto r = RunEvald(
      "drift --base " + models + "stories260K-f32.gguf --candidate " + models +
      "stories260K-q8_0.gguf --candidate " + models +
      "stories260K-q4_0.gguf --problems Bi01_and_gate Bi02_mux2_byte Bi11_fsm_detect101 --json " +
      json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("mean KL"), std::string::npos) << r.output;
  auto text = ReadFileBounded(json);
  ASSERT_TRUE(text.ok());
  v1::DriftReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*text, &report).ok());
  EXPECT_EQ(report.completions(), "references");
  ASSERT_EQ(report.variants_size(), 2);
  const auto& q8 = report.variants(0).overall();
  const auto& q4 = report.variants(1).overall();
  EXPECT_GT(q8.tokens(), 20);
  EXPECT_EQ(q8.tokens(), q4.tokens());
  EXPECT_LT(q8.mean_kl(), q4.mean_kl());
  EXPECT_GE(q8.top1_agreement(), q4.top1_agreement());
  EXPECT_LT(std::abs(q8.ppl_ratio() - 1), std::abs(q4.ppl_ratio() - 1));
  EXPECT_EQ(report.variants(1).problems_size(), 2);
  EXPECT_LE(report.variants(1).mean_kl_ci95().low(), q4.mean_kl() + 1e-12);
  EXPECT_GE(report.variants(1).by_category_size(), 1);
  // Bi11's prompt and reference need more than stories260K's 512 positions: left out, named.
  ASSERT_EQ(report.skipped_size(), 1);
  EXPECT_EQ(report.skipped(0), "Bi11_fsm_detect101");
  // As a chat endpoint serves the prompts: rendered in a chat format, more tokens before the
  // completion, the same completion tokens scored.
  const std::string chat_json = dir_ + "/drift-chat.json";
  auto chat = RunEvald("drift --base " + models + "stories260K-f32.gguf --candidate " + models +
                       "stories260K-q4_0.gguf --problems Bi01_and_gate Bi02_mux2_byte --api chat "
                       "--chat-format chatml --json " +
                       chat_json);
  ASSERT_EQ(chat.exit_code, 0) << chat.output;
  auto chat_text = ReadFileBounded(chat_json);
  ASSERT_TRUE(chat_text.ok());
  v1::DriftReport chat_report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*chat_text, &chat_report).ok());
  EXPECT_GT(chat_report.variants(0).overall().mean_kl(), 0);
  EXPECT_NE(chat_report.variants(0).overall().mean_kl(), q4.mean_kl()) << "another context";
  auto no_template = RunEvald("drift --base " + models + "stories260K-f32.gguf --candidate " +
                              models + "stories260K-q4_0.gguf --problems Bi01_and_gate --api chat");
  EXPECT_EQ(no_template.exit_code, 2);
  EXPECT_NE(no_template.output.find("has no tokenizer.chat_template"), std::string::npos)
      << no_template.output;
  auto other = RunEvald("drift --base " + models + "stories260K-f32.gguf --candidate " + models +
                        "llama-2-tiny-random.gguf --problems Bi01_and_gate");
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("not the same checkpoint"), std::string::npos) << other.output;
}

// `evald bench decode` prints every figure it promises, with numbers that add up: the
// aggregate of n samples and its time relative to one (the whole run, and a decode step), and
// the share of the bandwidth limit computed from the given bandwidth and the file's weight bytes.
TEST_F(EvalCommand, BenchDecodePrintsItsFigures) {
  std::string model = std::string(EVALD_SHARED_DIR) + "/models/stories260K-q8_0.gguf";
  auto r = RunEvald("bench decode --model " + model + " --tokens 16 --n 4 --bandwidth 10");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* want : {"prefill: ", "decode: ", "n=4: ", "tok/s aggregate",
                           "memory read bandwidth 10.0 GB/s (given)"})
    EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output;
  double decode = 0, limit = 0, share = 0;
  const size_t d = r.output.find("decode: "), l = r.output.find("-> limit ");
  ASSERT_NE(d, std::string::npos);
  ASSERT_NE(l, std::string::npos);
  ASSERT_EQ(std::sscanf(r.output.c_str() + d, "decode: %lf", &decode), 1);
  ASSERT_EQ(
      std::sscanf(r.output.c_str() + l, "-> limit %lf tok/s; decode reaches %lf%%", &limit, &share),
      2);
  EXPECT_GT(decode, 0);
  EXPECT_NEAR(share, 100 * decode / limit, 0.2);
  // The decode figures time the steps after the first token: one sample's, and n's against it.
  EXPECT_NE(r.output.find("from the first token to the last"), std::string::npos) << r.output;
  double step_ratio = 0;
  const size_t s = r.output.find("; a decode step ");
  ASSERT_NE(s, std::string::npos) << r.output;
  ASSERT_EQ(std::sscanf(r.output.c_str() + s, "; a decode step %lfx one sample's", &step_ratio), 1);
  EXPECT_GT(step_ratio, 0);
  auto missing = RunEvald("bench decode --model " + dir_ + "/missing.gguf --bandwidth 10");
  EXPECT_NE(missing.exit_code, 0);
}

}  // namespace
}  // namespace evald
