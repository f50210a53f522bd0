// RTLLM 2.0 (../shared/rtllm2) graded by evald: every design loads with the module its testbench
// instantiates, its data files and upstream's default timescale; the references calibrate as
// documented, each ungradable one failing the benchmark's own rule under Icarus too; evald's
// pass/fail is upstream's rule's (run by tests/upstream/rtllm_upstream_rule.py with Icarus) but
// for forgeries: a design that prints the pass line, or "pass", or reaches into the testbench
// gains nothing.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "base/file_io.h"
#include "base/hash.h"
#include "base/py_text.h"
#include "base/verilog_identifier.h"
#include "datasets/code_extractor.h"
#include "datasets/dataset.h"
#include "datasets/prompt_builder.h"
#include "datasets/rtllm.h"
#include "evald/proto/eval.pb.h"
#include "evald/runs/evaluation.h"
#include "harness/grader.h"
#include "test_support.h"

namespace evald {
namespace {

std::string Checkout() {
  return std::string(EVALD_SHARED_DIR) + "/rtllm2";
}

class Rtllm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!IsRtllmCheckout(Checkout())) GTEST_SKIP() << "no ../shared/rtllm2";
    auto ds = Dataset::Load(Checkout(), Task::kRtllm2);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    dataset_ = std::move(*ds);
    scratch_.emplace("rtllm-test");
    dir_ = scratch_->path();
  }
  std::optional<testing::ScratchDir> scratch_;
  const Problem& Get(const std::string& name) {
    const Problem* p = dataset_.Find(name);
    EXPECT_NE(p, nullptr) << name;
    return *p;
  }
  Dataset dataset_;
  std::string dir_;
};

TEST_F(Rtllm, EveryDesignLoadsWithTheModuleItsTestbenchInstantiates) {
  ASSERT_EQ(dataset_.problems().size(), 50u);
  for (const auto& p : dataset_.problems()) {
    EXPECT_EQ(p.setup.pass_signal, PassSignal::kPassLine) << p.name;
    EXPECT_EQ(p.setup.default_timescale, "1ns/1ns") << p.name;
    EXPECT_NE(p.testbench.find(p.setup.design_module), std::string::npos) << p.name;
    EXPECT_NE(p.reference.find("module " + p.setup.reference_module), std::string::npos) << p.name;
    EXPECT_TRUE(py::StartsWith(p.prompt, "Please act as a professional ")) << p.name;
  }
  // The testbench decides, not the folder or the description: the description of
  // freq_divbyeven names freq_diveven, its testbench instantiates freq_divbyeven.
  EXPECT_EQ(DescribedModuleName(Get("freq_divbyeven").prompt), "freq_diveven");
  EXPECT_EQ(Get("freq_divbyeven").setup.design_module, "freq_divbyeven");
  EXPECT_EQ(Get("fixed_point_substractor").setup.design_module, "fixed_point_subtractor");
  EXPECT_EQ(Get("multi_pipe_4bit").setup.reference_module, "verified_multi_pipe");
  EXPECT_EQ(Get("adder_8bit").setup.reference_module, "verified_adder_8bit");
  EXPECT_EQ(Get("multi_8bit").setup.reference_module, "multi_8bit");
  // Data files travel with their problem.
  EXPECT_EQ(Get("asyn_fifo").setup.data_files.size(), 3u);
  EXPECT_EQ(Get("calendar").setup.data_files.count("reference.txt"), 1u);
  EXPECT_TRUE(Get("adder_8bit").setup.data_files.empty());
  // The layout decides the task; the benchmark is on the record; a digest per problem set.
  EXPECT_EQ(*TaskForDataset(Checkout(), ""), Task::kRtllm2);
  EXPECT_EQ(BenchmarkName(Task::kRtllm2), "rtllm");
  EXPECT_EQ(BenchmarkVersion(Task::kRtllm2), "2.0");
  auto again = Dataset::Load(Checkout(), Task::kRtllm2);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->problems_digest(), dataset_.problems_digest());
  auto wrong = Dataset::Load(Checkout(), Task::kSpecToRtl);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().ToString().find("rtllm2"), std::string::npos);
}

TEST_F(Rtllm, ThePromptIsTheDescriptionAsItStands) {
  const Problem& p = Get("adder_8bit");
  auto prompt = BuildPrompt(dataset_, p, PromptOptions{});
  ASSERT_TRUE(prompt.ok());
  EXPECT_EQ(prompt->user, p.prompt);
  EXPECT_EQ(prompt->SystemTurn(), "");
  // Options that do not apply to the style asked for are refused by name, not ignored.
  for (auto set :
       {+[](PromptOptions& o) { o.system_in_prompt = true; },
        +[](PromptOptions& o) { o.rules = true; }, +[](PromptOptions& o) { o.explain = true; },
        +[](PromptOptions& o) {
          o.style = PromptStyle::kSystemMessage;
          o.rules = true;
        },
        +[](PromptOptions& o) {
          o.style = PromptStyle::kQuestionAnswer;
          o.shots = 1;
        }}) {
    PromptOptions options;
    set(options);
    auto refused = BuildPrompt(dataset_, p, options);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().ToString().find("RTLLM"), std::string::npos)
        << refused.status().ToString();
  }
}

// The wrappings other harnesses put around the description: a system message of its own, or
// verilog-eval v2's question and answer, byte for byte what verilog-eval sends for a spec.
TEST_F(Rtllm, OffersTheSystemMessageAndQuestionAnswerStyles) {
  const Problem& p = Get("adder_8bit");
  const auto& strings = dataset_.prompts();
  PromptOptions system;
  system.style = PromptStyle::kSystemMessage;
  auto with_system = BuildPrompt(dataset_, p, system);
  ASSERT_TRUE(with_system.ok()) << with_system.status().ToString();
  EXPECT_EQ(with_system->user, p.prompt);
  EXPECT_EQ(with_system->SystemTurn(), strings.spec_to_rtl().system_msg());
  system.system_in_prompt = true;
  auto in_prompt = BuildPrompt(dataset_, p, system);
  ASSERT_TRUE(in_prompt.ok());
  EXPECT_EQ(in_prompt->SystemTurn(), "");
  EXPECT_EQ(in_prompt->user, strings.spec_to_rtl().system_msg() + "\n" + p.prompt);

  // The same wrapping as a verilog-eval spec-to-rtl problem whose spec is the description.
  auto v2 = Dataset::Load(testing::BuiltinDataset(), Task::kSpecToRtl);
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  Problem as_spec = v2->problems().front();
  as_spec.prompt = p.prompt;
  for (bool rules : {false, true}) {
    for (bool explain : {false, true}) {
      PromptOptions qa{.rules = rules, .explain = explain};
      const auto expected = BuildPrompt(*v2, as_spec, qa);
      qa.style = PromptStyle::kQuestionAnswer;
      const auto wrapped = BuildPrompt(dataset_, p, qa);
      ASSERT_TRUE(wrapped.ok() && expected.ok());
      EXPECT_EQ(wrapped->user, expected->user);
      EXPECT_EQ(wrapped->SystemTurn(), expected->SystemTurn());
      EXPECT_TRUE(wrapped->user.ends_with("\nAnswer:\n"));
      EXPECT_EQ(wrapped->user.find("[BEGIN]") != std::string::npos, !explain);
    }
  }
  EXPECT_FALSE(ParsePromptStyle("wrapped").ok());
  EXPECT_EQ(*ParsePromptStyle("question-answer"), PromptStyle::kQuestionAnswer);
  // verilog-eval's own prompts take no other style.
  PromptOptions on_v2;
  on_v2.style = PromptStyle::kSystemMessage;
  EXPECT_FALSE(BuildPrompt(*v2, as_spec, on_v2).ok());
}

TEST_F(Rtllm, TheCodeIsTheFencedBlocksThatDeclareAModule) {
  auto fenced =
      ExtractCode(Task::kRtllm2,
                  "Here it is:\n```verilog\nmodule a(); endmodule\n```\nUse it like:\n"
                  "```\nadder u(...);\n```\nand\n```verilog\nmodule b(); endmodule\n```\n",
                  "");
  EXPECT_EQ(fenced.method, "fence");
  EXPECT_EQ(fenced.code, "module a(); endmodule\nmodule b(); endmodule\n");
  auto whole = ExtractCode(Task::kRtllm2, "module a(); endmodule\n", "");
  EXPECT_EQ(whole.method, "whole");
  EXPECT_EQ(whole.code, "module a(); endmodule\n");
}

// An answer to the question-answer style: what [BEGIN] and [DONE] enclose, and of that the
// fenced blocks when it has them; an unclosed [BEGIN] is read as a response without markers.
TEST_F(Rtllm, AnAnswerBetweenBeginAndDoneIsWhatTheyEnclose) {
  auto marked = ExtractCode(Task::kRtllm2,
                            "Sure.\n[BEGIN]\nmodule a(); endmodule\n[DONE]\nmodule junk\n", "");
  EXPECT_EQ(marked.method, "markers");
  EXPECT_EQ(marked.code, "module a(); endmodule\n");
  auto fenced_inside =
      ExtractCode(Task::kRtllm2, "[BEGIN]\n```verilog\nmodule a(); endmodule\n```\n[DONE]\n", "");
  EXPECT_EQ(fenced_inside.method, "markers");
  EXPECT_EQ(fenced_inside.code, "module a(); endmodule\n");
  // The markers may share a line with code, as verilog-eval reads them.
  auto same_line = ExtractCode(Task::kRtllm2, "[BEGIN]module a();\nendmodule[DONE]\n", "");
  EXPECT_EQ(same_line.code, "module a();\nendmodule\n");
  auto unclosed =
      ExtractCode(Task::kRtllm2, "[BEGIN]\n```verilog\nmodule a(); endmodule\n```\n", "");
  EXPECT_EQ(unclosed.method, "fence");
  EXPECT_EQ(unclosed.code, "module a(); endmodule\n");
  ASSERT_EQ(unclosed.notes.size(), 1u);
}

// Upstream's rule run with Icarus on a samples file: "problem#index" -> passed.
std::map<std::string, bool> UpstreamRule(const std::string& samples) {
  std::map<std::string, bool> out;
  auto r = testing::RunShell("/usr/bin/python3 " + testing::SourceDir() +
                             "/tests/upstream/rtllm_upstream_rule.py " + Checkout() + " " +
                             samples + " 2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (auto line : py::SplitLines(r.output)) {
    if (py::Strip(line).empty()) continue;
    const size_t at = line.find("\"problem\": \"") + 12;
    const std::string problem(line.substr(at, line.find('"', at) - at));
    const size_t ix = line.find("\"index\": ") + 9;
    out[problem + "#" + std::string(line.substr(ix, line.find(',', ix) - ix))] =
        line.find("\"passed\": true") != std::string_view::npos;
  }
  return out;
}

v1::EvalReport EvaldRun(const std::string& samples, const std::string& json,
                        const std::string& flags = "--formal off") {
  auto r =
      testing::RunShell(std::string(EVALD_BINARY) + " eval --dataset " + Checkout() +
                        " --samples " + samples + " " + flags + " -j 2 --json " + json + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  v1::EvalReport parsed;
  auto text = ReadFileBounded(json);
  EXPECT_TRUE(text.ok());
  if (text.ok()) {
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(*text, &parsed).ok());
  }
  return parsed;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Every reference, graded as a design: evald calibrates 46 of 50 with Icarus, and the four it
// cannot grade fail the benchmark's own rule with Icarus as well.
TEST_F(Rtllm, EveryReferenceCalibratesAsDocumented) {
  EvalOptions opts;
  opts.resources.jobs = 2;
  auto report = CheckDataset(dataset_, opts);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->benchmark().name(), "rtllm");
  std::map<std::string, std::string> ungradable;
  for (const auto& p : report->problems())
    if (!p.gradable()) ungradable[p.problem()] = p.note();
  const std::map<std::string, std::string> expected = {
      {"asyn_fifo", "break statements not supported"},
      {"clkgenerator", "Test completed with"},
      {"radix2_div", "expected=00f6, got=faf1"},
      {"ring_counter", "Cannot assign to array"}};
  ASSERT_EQ(ungradable.size(), expected.size());
  for (const auto& [name, reason] : expected) {
    ASSERT_EQ(ungradable.count(name), 1u) << name;
    EXPECT_NE(ungradable[name].find(reason), std::string::npos) << name << ": " << ungradable[name];
  }
  std::string lines;
  for (const auto& p : dataset_.problems())
    lines +=
        "{\"problem\": \"" + p.name + "\", \"code\": " + JsonString(ReferenceDesign(p)) + "}\n";
  const std::string samples = dir_ + "/references.jsonl";
  ASSERT_TRUE(WriteFileAtomic(samples, lines).ok());
  for (const auto& [key, passed] : UpstreamRule(samples)) {
    const std::string name = key.substr(0, key.find('#'));
    EXPECT_EQ(passed, expected.count(name) == 0) << name;
  }
}

// Hostile designs for adder_8bit, each wrong (sum stuck at 0) unless said otherwise.
TEST_F(Rtllm, APrintedPassLinePassesUpstreamAndFailsHere) {
  const std::string head =
      "module adder_8bit(input [7:0] a, input [7:0] b, input cin, output [7:0] sum, "
      "output cout);\n";
  const std::string wrong = "  assign sum = 8'd0;\n  assign cout = 1'b0;\n";
  const std::string right = "  assign {cout, sum} = a + b + cin;\n";
  const std::vector<std::pair<std::string, char>> designs = {
      // the testbench's own pass line, printed by the design
      {head + wrong + "  initial #2000 $display(\"===========Your Design Passed===========\");\n",
       'I'},
      // any text with "pass" in it: upstream's substring test takes it
      {head + wrong + "  initial $display(\"bypass\");\n", 'R'},
      // the testbench's error counter, held at 0 from the design by hierarchical name
      {head + wrong + "  initial force testbench.error = 0;\n", 'I'},
      // a right design: passes both
      {head + right, '.'},
  };
  std::string lines;
  for (const auto& [code, letter] : designs)
    lines += "{\"problem\": \"adder_8bit\", \"code\": " + JsonString(code + "endmodule\n") + "}\n";
  const std::string samples = dir_ + "/hostile.jsonl";
  ASSERT_TRUE(WriteFileAtomic(samples, lines).ok());
  auto upstream = UpstreamRule(samples);
  auto report = EvaldRun(samples, dir_ + "/report.json");
  ASSERT_EQ(report.samples_size(), static_cast<int>(designs.size()));
  EXPECT_EQ(report.task(), "rtllm2");
  for (const auto& s : report.samples()) {
    const char letter = designs[s.index()].second;
    EXPECT_EQ(s.verdict(), std::string(1, letter)) << s.index() << ": " << s.detail();
    EXPECT_TRUE(upstream["adder_8bit#" + std::to_string(s.index())])
        << "upstream's rule no longer passes hostile design " << s.index();
    // Upstream's letter where the design ran (a design refused before compiling never does).
    if (s.verdict() != "I" || s.benchmark_verdict() != "?") {
      EXPECT_EQ(s.benchmark_verdict(), ".") << s.index();
    }
  }
}

// Synthesis has a CPU budget of its own, not formal's one second: div_16bit's reference needs
// about three, and a synthesis cut short gives no figures at all. A reference Yosys cannot read
// (synchronizer's: two edges on one signal) is named with Yosys's own error.
TEST_F(Rtllm, SynthesisHasABudgetOfItsOwn) {
  std::string jsonl;
  for (const char* name : {"adder_8bit", "div_16bit", "synchronizer"}) {
    const Problem& p = Get(name);
    const std::string code =
        p.setup.reference_module == p.setup.design_module
            ? p.reference
            : RenameIdentifier(p.reference, p.setup.reference_module, p.setup.design_module);
    jsonl += "{\"problem\": \"" + std::string(name) + "\", \"code\": " + JsonString(code) + "}\n";
  }
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/refs.jsonl", jsonl).ok());
  auto report =
      EvaldRun(dir_ + "/refs.jsonl", dir_ + "/refs.json", "--formal off --synth --check-seconds 1");
  ASSERT_EQ(report.samples_size(), 3);
  EXPECT_EQ(report.grading().cross_checks().cpu_seconds(), 1u);
  EXPECT_EQ(report.grading().cross_checks().synthesis_cpu_seconds(), 10u);
  for (const auto& s : report.samples()) {
    EXPECT_EQ(s.verdict(), ".") << s.problem() << ": " << s.detail();
    if (s.problem() == "synchronizer") {
      EXPECT_NE(s.synthesis().problem().find("Multiple edge sensitive events"), std::string::npos)
          << s.synthesis().problem();
      EXPECT_EQ(s.synthesis().area_ratio(), 0);
    } else {
      EXPECT_EQ(s.synthesis().problem(), "") << s.problem();
      EXPECT_GT(s.synthesis().cells(), 0) << s.problem();
      EXPECT_EQ(s.synthesis().area_ratio(), 1) << s.problem();
    }
  }
}

}  // namespace
}  // namespace evald
