#include "datasets/code_extractor.h"

#include <gtest/gtest.h>

namespace evald {
namespace {

// Expected outputs are the bytes verilog-eval's sv-generate writes to its sample file for the
// same response (worked through its code by hand).

TEST(ExtractSpecToRtl, Markers) {
  auto r = ExtractCode(Task::kSpecToRtl, "[BEGIN]\nmodule TopModule();\nendmodule\n[DONE]\n", "");
  EXPECT_EQ(r.method, "markers");
  EXPECT_EQ(r.code, "\nmodule TopModule();\nendmodule\n\n");
  EXPECT_FALSE(r.interface_prepended);
}

TEST(ExtractSpecToRtl, MarkersOnCodeLines) {
  auto r = ExtractCode(Task::kSpecToRtl,
                       "Answer:\n  [BEGIN]module TopModule();\nendmodule [DONE]  \nbye", "");
  EXPECT_EQ(r.method, "markers");
  EXPECT_EQ(r.code, "\nmodule TopModule();\nendmodule \n\n");
}

TEST(ExtractSpecToRtl, OnlyFirstMarkedBlock) {
  auto r = ExtractCode(Task::kSpecToRtl, "[BEGIN]\na\n[DONE]\n[BEGIN]\nb\n[DONE]", "");
  EXPECT_EQ(r.code, "\na\n\n");
}

TEST(ExtractSpecToRtl, UnterminatedMarkersExtractNothing) {
  auto r = ExtractCode(Task::kSpecToRtl, "[BEGIN]\nmodule TopModule();\nendmodule\n", "");
  EXPECT_EQ(r.method, "markers_unterminated");
  EXPECT_EQ(r.code, "\n\n");
}

TEST(ExtractSpecToRtl, FenceFallback) {
  auto r = ExtractCode(Task::kSpecToRtl,
                       "Here:\n```verilog\nmodule TopModule();\nendmodule\n```\nDone.", "");
  EXPECT_EQ(r.method, "fence");
  EXPECT_EQ(r.code,
            "\nmodule TopModule();\nendmodule\n\n"
            "// VERILOG-EVAL: response did not use <CODE></CODE> correctly\n\n");
}

TEST(ExtractSpecToRtl, OnlyFirstFenceOfSeveral) {
  auto r = ExtractCode(Task::kSpecToRtl, "```\na\n```\ntext\n```\nb\n```\n", "");
  EXPECT_EQ(r.method, "fence");
  EXPECT_EQ(r.code, "\na\n\n// VERILOG-EVAL: response did not use <CODE></CODE> correctly\n\n");
}

TEST(ExtractSpecToRtl, EndmoduleFallbackSkipsProse) {
  auto r = ExtractCode(Task::kSpecToRtl,
                       "Sure, here it is:\nmodule TopModule(input a);\n  assign x = a;\nendmodule\n"
                       "It works because...\nendmodule",
                       "");
  EXPECT_EQ(r.method, "endmodule");
  EXPECT_EQ(r.code,
            "\nmodule TopModule(input a);\n  assign x = a;\nendmodule\n\n"
            "// VERILOG-EVAL: response did not use <CODE></CODE> correctly\n\n");
}

TEST(ExtractSpecToRtl, IndentedModuleIsNotDetectedByFirstPass) {
  // The first pass needs `module TopModule` at the start of a line; an indented one is echoed
  // together with the prose before it, exactly as the benchmark does.
  auto r = ExtractCode(Task::kSpecToRtl, "Prose\n  module TopModule();\n  endmodule\ntail", "");
  EXPECT_EQ(r.method, "endmodule");
  EXPECT_EQ(r.code,
            "\nProse\n  module TopModule();\n  endmodule\n\n"
            "// VERILOG-EVAL: response did not use <CODE></CODE> correctly\n\n");
}

TEST(ExtractSpecToRtl, EndmoduleBeforeModuleCancelsModuleDetection) {
  auto r = ExtractCode(Task::kSpecToRtl, "endmodule\nmodule TopModule();\nendmodule", "");
  // Echo stops after the first endmodule line.
  EXPECT_EQ(r.code,
            "\nendmodule\n\n// VERILOG-EVAL: response did not use <CODE></CODE> correctly\n\n");
}

TEST(ExtractSpecToRtl, CarriageReturnsAndUnicodeLineBreaks) {
  auto r =
      ExtractCode(Task::kSpecToRtl, "[BEGIN]\r\nmodule TopModule();\r\nendmodule\r\n[DONE]", "");
  EXPECT_EQ(r.code, "\nmodule TopModule();\nendmodule\n\n");
  auto u = ExtractCode(Task::kSpecToRtl,
                       "[BEGIN]\xe2\x80\xa8"
                       "a\xe2\x80\xa9[DONE]",
                       "");
  EXPECT_EQ(u.code, "\na\n\n");
}

TEST(ExtractSpecToRtl, EmptyAndGarbageResponses) {
  auto e = ExtractCode(Task::kSpecToRtl, "", "");
  EXPECT_EQ(e.method, "whole");
  EXPECT_EQ(e.code, "\n\n// VERILOG-EVAL: response did not use <CODE></CODE> correctly\n\n");
  std::string junk(100000, '\0');
  auto j = ExtractCode(Task::kSpecToRtl, junk, "");
  EXPECT_EQ(j.method, "whole");
}

const char* kIfc = "module TopModule (\n  input a,\n  output out\n);\n";

TEST(ExtractCodeComplete, BodyGetsInterface) {
  auto r = ExtractCode(Task::kCodeComplete, "  assign out = a;\nendmodule\n", kIfc);
  EXPECT_TRUE(r.interface_prepended);
  EXPECT_EQ(r.method, "endmodule");
  EXPECT_EQ(r.code, std::string("\n") + kIfc + "\n\n  assign out = a;\nendmodule\n\n\n");
  EXPECT_TRUE(r.notes.empty());
}

TEST(ExtractCodeComplete, FullModuleIsKept) {
  auto r =
      ExtractCode(Task::kCodeComplete,
                  "module TopModule (input a, output out);\n  assign out = a;\nendmodule\n", kIfc);
  EXPECT_FALSE(r.interface_prepended);
  EXPECT_EQ(r.code,
            "\nmodule TopModule (input a, output out);\n  assign out = a;\nendmodule\n\n"
            "// VERILOG-EVAL: errant inclusion of module definition\n\n\n");
}

TEST(ExtractCodeComplete, FencedBodyAndMissingEndmodule) {
  auto r = ExtractCode(Task::kCodeComplete, "```verilog\n  assign out = a;\n```\n", kIfc);
  EXPECT_EQ(r.method, "fence");
  EXPECT_EQ(r.code, std::string("\n") + kIfc +
                        "\n\n  assign out = a;\n\n// VERILOG-EVAL: endmodule not found\n\n\n");
  ASSERT_EQ(r.notes.size(), 1u);
}

TEST(ExtractCodeComplete, AbnormalBackticks) {
  auto r = ExtractCode(Task::kCodeComplete, "```\n  assign out = a;\nendmodule\n", kIfc);
  EXPECT_EQ(r.code, std::string("\n") + kIfc +
                        "\n\n  assign out = a;\nendmodule\n\n"
                        "// VERILOG-EVAL: abnormal backticks count\n\n\n");
}

}  // namespace
}  // namespace evald
