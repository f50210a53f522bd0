// The fuzz targets over the grader's parsers of untrusted text. They link only the harness, so
// scripts/fuzz_smoke.sh can build them with clang and run them under libFuzzer in every CI run.
#include <algorithm>
#include <string>
#include <string_view>

#include "base/py_text.h"
#include "harness/counterexample_replay.h"
#include "harness/failure_category.h"
#include "harness/formal_check.h"
#include "harness/formal_fidelity.h"
#include "harness/integrity_check.h"
#include "harness/reference_mutants.h"
#include "harness/result_line.h"
#include "harness/self_checking_bench.h"
#include "harness/synthesis_stats.h"
#include "harness/verilog_lexer.h"
#include "tests/fuzz/fuzz_targets.h"

namespace evald::fuzz {

int CheckIntegrity(const uint8_t* data, size_t size) {
  (void)CheckDesignIntegrity(View(data, size));
  // The same design as compiled text: formal's allow-list walks it too.
  (void)CheckFormalFidelity(View(data, size));
  return 0;
}

int LexVerilog(const uint8_t* data, size_t size) {
  std::string_view text = View(data, size);
  const char* last = text.data();
  for (const auto& t : TokenizeVerilog(text)) {
    // Every token is a view into the input, after the one before it.
    if (t.text.data() < last || t.text.data() + t.text.size() > text.data() + text.size())
      __builtin_trap();
    last = t.text.data();
  }
  // What Yosys reads: every line kept (line numbers stay the design's), nothing longer, and no
  // attribute left to strip in what is left.
  const std::string stripped = StripAttributes(text);
  auto lines = [](std::string_view s) { return std::count(s.begin(), s.end(), '\n'); };
  if (lines(stripped) != lines(text) || stripped.size() > text.size() ||
      StripAttributes(stripped) != stripped)
    __builtin_trap();
  // Formal results are shared by the layout-free key: comments are layout to it.
  if (LayoutFreeKey(text) != LayoutFreeKey(StripComments(text))) __builtin_trap();
  return 0;
}

int ClassifyOutput(const uint8_t* data, size_t size) {
  std::string_view text = View(data, size);
  for (auto line : py::SplitFileLines(text)) {
    auto anchored = MatchResultLine(line);
    auto anywhere = FindResultLine(line);
    if (anchored && !anywhere) __builtin_trap();  // the anchored form is a special case
    if (anchored && anchored->zero_mismatches && anchored->mismatches != 0) __builtin_trap();
  }
  (void)BenchmarkLogCategory(text);
  (void)BenchmarkRuntimeCategory(text);
  // A self-checking testbench's output, both streams the same text: every tagged line on stderr
  // is the testbench's, every other line carrying the tag or a pass text a forgery.
  const std::string tag = "[evald-0123]";
  PassLines lines = ScanPassLines(text, text, tag, {"Your Design Passed"});
  if (lines.pass < 0 || lines.fail < 0 || lines.first_fail.size() > 300) __builtin_trap();
  (void)RtllmUpstreamLetter(true, text);
  return 0;
}

int ParseYosysOutput(const uint8_t* data, size_t size) {
  std::string_view text = View(data, size);
  std::vector<TraceStep> trace = ParseSatTable(text);
  for (size_t i = 0; i < trace.size(); ++i)
    for (const auto& [name, bits] : trace[i].inputs)
      if (bits.empty() || bits.find_first_not_of("01xXzZ") != std::string::npos) __builtin_trap();
  auto bench = BuildReplayBench(trace, "cycle", "n");
  if (bench.ok() && bench->find("module replay_n") == std::string::npos) __builtin_trap();
  SynthStats stats;
  ParseStat(text, &stats);
  (void)ParseLongestPath(text);
  for (const Mutant& m : MutateDesign(std::string(text), 2))
    if (m.text == text) __builtin_trap();  // a mutant always changes the design
  return 0;
}

}  // namespace evald::fuzz
