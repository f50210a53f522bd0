// The check's view of a text against the real preprocessors' (tests/fuzz/
// preprocessor_differential.h): generated texts of hard-to-lex fragments, the hostile corpus and
// the built-in references. The same property runs as a libFuzzer target in the fuzz smoke run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "base/file_io.h"
#include "test_support.h"
#include "tests/fuzz/preprocessor_differential.h"

namespace evald::fuzz {
namespace {

// EVALD_PPDIFF_TEXTS and EVALD_PPDIFF_SEED run a longer hunt than the test command's.
int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

TEST(PreprocessorDifferential, GeneratedTextsReadAlikeAndStayFinal) {
  std::mt19937 rng(static_cast<uint32_t>(EnvInt("EVALD_PPDIFF_SEED", 20261201)));
  int accepted = 0, plain = 0;
  const int texts = EnvInt("EVALD_PPDIFF_TEXTS", 250);
  for (int i = 0; i < texts; ++i) {
    std::string text = RandomPreprocessorText(rng);
    // Every third text without directives: the lexers' views of plain text are compared too.
    if (i % 3 == 0) {
      std::string plain_text;
      for (char c : text) plain_text += c == '`' ? ' ' : c;
      text = plain_text;
      ++plain;
    }
    DifferentialResult r = CompareWithPreprocessors(text);
    ASSERT_FALSE(r.mismatch) << r.what << "\n--- text ---\n" << text;
    accepted += r.accepted;
  }
  EXPECT_GT(accepted, texts / 10);  // the property is exercised, not skipped for refused texts
  EXPECT_GT(plain, 0);
}

// Texts the fuzz smoke run found, and their kin. Verilator drops carriage returns, and ^Z and the
// byte order mark's bytes in code, before it reads (harness/dropped_bytes.h): the lexer's view
// of what Verilator reads leaves them out too.
TEST(PreprocessorDifferential, FoundByFuzzing) {
  const std::string found[] = {
      "module RefModule (\n  inpuRefModule (\n  input a,\n  output logic out\n);\n\n"
      "  a\x8esign out = a & b;\n\x1a"
      "endmodule\n",
      "module m; initial $dis\rplay(\"a\"); wire a\xef"
      "b; wire c\x1a"
      "d; endmodule\n",
      "module m; initial $display(\"\xef\xbb\xbf\"); /* *\xef\xbb\xbf/ wire w; /* */ endmodule\n",
      "module m; /\xef* wire w; */ wire \\v\x1a ; // \xbb\r\n\"s\x1a\xef\"; endmodule\n",
  };
  for (const auto& text : found) {
    DifferentialResult r = CompareWithPreprocessors(text);
    EXPECT_FALSE(r.mismatch) << r.what;
  }
}

TEST(PreprocessorDifferential, HostileCorpusAndReferences) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(testing::SourceDir() + "/tests/hostile"))
    files.push_back(e.path());
  for (const auto& e :
       std::filesystem::directory_iterator(testing::BuiltinDataset() + "/dataset_spec-to-rtl"))
    if (e.path().string().find("_ref.sv") != std::string::npos) files.push_back(e.path());
  for (const auto& f : files) {
    auto text = ReadFileBounded(f.string());
    ASSERT_TRUE(text.ok());
    DifferentialResult r = CompareWithPreprocessors(*text);
    EXPECT_FALSE(r.mismatch) << f << ": " << r.what;
  }
}

}  // namespace
}  // namespace evald::fuzz
