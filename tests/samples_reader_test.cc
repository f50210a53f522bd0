#include "evald/samples/samples_reader.h"

#include <gtest/gtest.h>

namespace evald {
namespace {

TEST(SamplesReader, ReadsGoodLinesAndReportsBadOnesByLine) {
  std::string text =
      "{\"problem\": \"P1\", \"completion\": \"[BEGIN]x[DONE]\"}\n"
      "\n"
      "{\"task_id\": \"P2\", \"code\": \"module TopModule(); endmodule\", \"index\": 3}\n"
      "{not json\n"
      "{\"problem\": \"P1\"}\n"
      "{\"completion\": \"x\"}\n"
      "{\"problem\": \"../../etc\", \"code\": \"x\"}\n"
      "{\"problem\": \"P3\", \"code\": \"x\", \"index\": -2}\n"
      "[1, 2, 3]\n"
      "{\"problem\": \"P4\", \"code\": \"c\", \"extra\": {\"nested\": [1]}}";  // no final newline
  SamplesFile f = ParseSamplesJsonl(text);
  ASSERT_EQ(f.samples.size(), 3u);
  EXPECT_EQ(f.samples[0].problem, "P1");
  EXPECT_FALSE(f.samples[0].has_code);
  EXPECT_EQ(f.samples[0].index, -1);
  EXPECT_EQ(f.samples[1].problem, "P2");
  EXPECT_TRUE(f.samples[1].has_code);
  EXPECT_EQ(f.samples[1].index, 3);
  EXPECT_EQ(f.samples[1].line, 3);
  EXPECT_EQ(f.samples[2].problem, "P4");
  ASSERT_EQ(f.errors.size(), 6u);
  EXPECT_EQ(f.errors[0].line(), 4);
  EXPECT_NE(f.errors[0].message().find("malformed JSON"), std::string::npos);
  EXPECT_EQ(f.errors[0].message().find('\n'), std::string::npos);
  EXPECT_EQ(f.errors[1].line(), 5);
  EXPECT_NE(f.errors[1].message().find("completion"), std::string::npos);
  EXPECT_EQ(f.errors[2].line(), 6);
  EXPECT_NE(f.errors[2].message().find("problem"), std::string::npos);
  EXPECT_EQ(f.errors[3].line(), 7);
  EXPECT_EQ(f.errors[4].line(), 8);
  EXPECT_EQ(f.errors[5].line(), 9);
}

TEST(SamplesReader, MissingFileIsAnError) {
  EXPECT_FALSE(ReadSamplesJsonl("/nonexistent/samples.jsonl").ok());
  EXPECT_FALSE(ReadSamplesJsonl("/").ok());
}

TEST(SamplesReader, HostileBytesDoNotCrash) {
  std::string text;
  for (int i = 0; i < 256; ++i) text += static_cast<char>(i);
  text += "\n{\"problem\":\"P\",\"code\":\"\\u0000\\ud800\"}\n";
  SamplesFile f = ParseSamplesJsonl(text);
  EXPECT_GE(f.errors.size(), 1u);
}

// A name with a terminal escape sequence is reported, its control bytes escaped.
TEST(SamplesReader, ControlBytesOfTheInputNeverReachAMessage) {
  SamplesFile f =
      ParseSamplesJsonl("{\"problem\":\"\\u001b]0;owned\\u0007\\u001b[2J\",\"code\":\"x\"}\n");
  ASSERT_EQ(f.errors.size(), 1u);
  const std::string& m = f.errors[0].message();
  EXPECT_NE(m.find("invalid problem name"), std::string::npos) << m;
  EXPECT_EQ(m.find('\x1b'), std::string::npos) << m;
  EXPECT_EQ(m.find('\x07'), std::string::npos) << m;
  EXPECT_NE(m.find("\\x1b"), std::string::npos) << m;
}

}  // namespace
}  // namespace evald

namespace evald {
namespace {

// The reader's and the planner's errors come separately; the list a person reads is in line
// order, capped after the first kMaxKeptInputErrors.
TEST(SamplesReader, InputErrorsAreKeptInLineOrder) {
  google::protobuf::RepeatedPtrField<v1::InputError> errors;
  for (int line : {50, 51, 49, 3}) {
    v1::InputError* e = errors.Add();
    e->set_line(line);
    e->set_message("bad line " + std::to_string(line));
  }
  CapInputErrors(&errors, 0);
  ASSERT_EQ(errors.size(), 4);
  EXPECT_EQ(errors[0].line(), 3);
  EXPECT_EQ(errors[1].line(), 49);
  EXPECT_EQ(errors[2].line(), 50);
  EXPECT_EQ(errors[3].line(), 51);
  CapInputErrors(&errors, 7);
  EXPECT_EQ(errors.size(), 5);
  EXPECT_EQ(errors[4].line(), 0) << "the 'and N more' entry stays last";
}

}  // namespace
}  // namespace evald
