// Untrusted text handled in linear time, bounded memory and without exceptions: the result-line
// scanner, number parsing, the gate's thresholds, input-error caps, terminal escaping and
// output files that refuse to write through links.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/file_io.h"
#include "base/numbers.h"
#include "base/text_escape.h"
#include "evald/gate/ci_gate.h"
#include "evald/samples/samples_reader.h"
#include "harness/result_line.h"

namespace evald {
namespace {

TEST(ResultLine, MatchesTheBenchmarksPatternOnly) {
  auto r = MatchResultLine("Mismatches: 0 in 20 samples");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->zero_mismatches);
  EXPECT_EQ(r->samples, 20);
  EXPECT_FALSE(MatchResultLine("Mismatches: 0 in 20 samples "));  // anchored
  EXPECT_FALSE(MatchResultLine("Mismatches:  0 in 20 samples"));
  EXPECT_FALSE(MatchResultLine("x Mismatches: 0 in 20 samples"));
  auto f = FindResultLine("[tag] Mismatches:\t3   in  7 samples, done");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->mismatches, 3);
  EXPECT_EQ(f->samples, 7);
  EXPECT_FALSE(FindResultLine("Mismatches: in 7 samples"));
}

// 200,000 digits or blanks crashed the grader through std::regex's recursion.
TEST(ResultLine, HugeInputsAreLinearAndDoNotOverflow) {
  std::string digits = "Mismatches: " + std::string(200000, '7');
  EXPECT_FALSE(FindResultLine(digits));
  EXPECT_FALSE(MatchResultLine(digits));
  auto big = FindResultLine(digits + " in 5 samples");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->mismatches, -1);  // does not fit: never read as a number, never as zero
  EXPECT_FALSE(big->zero_mismatches);
  std::string blanks = "Mismatches:" + std::string(200000, ' ') + "0";
  EXPECT_FALSE(FindResultLine(blanks));
  std::string many;
  for (int i = 0; i < 50000; ++i) many += "Mismatches: 1 i";
  EXPECT_FALSE(FindResultLine(many));
}

TEST(Numbers, WholeTextInRangeOrNothing) {
  EXPECT_EQ(ParseInt("42", 0, 100), 42);
  EXPECT_FALSE(ParseInt("42x", 0, 100));
  EXPECT_FALSE(ParseInt("", 0, 100));
  EXPECT_FALSE(ParseInt("101", 0, 100));
  EXPECT_FALSE(ParseInt("99999999999999999999999", 0, 100));
  EXPECT_EQ(ParseDouble("0.5"), 0.5);
  EXPECT_FALSE(ParseDouble("0.5.1"));
  EXPECT_FALSE(ParseDouble("1e999"));
}

TEST(GateThresholds, OutOfRangeIsAnErrorNotAnAbort) {
  EXPECT_FALSE(ParseThresholds("pass@99999999999>=0.5").ok());
  EXPECT_FALSE(ParseThresholds("pass@1>=1.5").ok());
  EXPECT_FALSE(ParseThresholds("pass@1>0.5").ok());
  auto ok = ParseThresholds(" pass@1 >= 0.45 ,5:.6");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_EQ(ok->size(), 2u);
  EXPECT_EQ((*ok)[1].k, 5);
  EXPECT_DOUBLE_EQ((*ok)[1].minimum, 0.6);
}

TEST(InputErrors, AMillionBadLinesKeepAHundred) {
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "{\n";
  text += "{\"problem\": \"Bi01_and_gate\", \"code\": \"x\", \"index\": 2147483647}\n";
  SamplesFile f = ParseSamplesJsonl(text);
  EXPECT_EQ(f.errors.size(), static_cast<size_t>(kMaxKeptInputErrors));
  EXPECT_EQ(f.errors_dropped, 100001 - kMaxKeptInputErrors);  // the index is out of range too
  google::protobuf::RepeatedPtrField<v1::InputError> errors(f.errors.begin(), f.errors.end());
  CapInputErrors(&errors, f.errors_dropped);
  ASSERT_EQ(errors.size(), kMaxKeptInputErrors + 1);
  EXPECT_NE(errors.rbegin()->message().find("99901 more"), std::string::npos);
}

TEST(TerminalText, ControlCharactersAreEscaped) {
  EXPECT_EQ(EscapeControl("a\x1b]0;x\x07z\n"), "a\\x1b]0;x\\x07z\\x0a");
  EXPECT_EQ(EscapeControl("plain \xc3\xa9"), "plain \xc3\xa9");  // UTF-8 stays
}

TEST(OutputFiles, NonRegularTargetsAreRefusedAndFifosNotRead) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("evald-out-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path victim = dir / "victim", link = dir / "report.json", fifo = dir / "fifo";
  ASSERT_TRUE(WriteFileAtomic(victim.string(), "keep").ok());
  fs::create_symlink(victim, link);
  EXPECT_FALSE(WriteFileAtomic(link.string(), "{}").ok());
  EXPECT_EQ(*ReadFileBounded(victim.string()), "keep");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(ReadFileBounded(fifo.string()).ok());  // refused at once, not a hang
  EXPECT_FALSE(WriteFileAtomic(fifo.string(), "{}").ok());
  ASSERT_TRUE(WriteFileAtomic((dir / "ok.json").string(), "{}").ok());
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir))
    files += e.path().string().find(".tmp.") == std::string::npos;
  EXPECT_EQ(files, 4u);  // victim, link, fifo, ok.json: no temporary left behind
  fs::remove_all(dir);
}

}  // namespace
}  // namespace evald
