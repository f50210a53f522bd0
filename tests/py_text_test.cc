#include "base/py_text.h"

#include <gtest/gtest.h>

namespace evald::py {
namespace {

std::vector<std::string> Lines(std::string_view s) {
  std::vector<std::string> out;
  for (auto l : SplitLines(s)) out.emplace_back(l);
  return out;
}

TEST(PyText, SplitLinesMatchesPython) {
  // Values worked out with Python 3: "a\r\nb\rc\nd".splitlines() == ['a', 'b', 'c', 'd']
  EXPECT_EQ(Lines("a\r\nb\rc\nd"), (std::vector<std::string>{"a", "b", "c", "d"}));
  // A trailing newline does not make an empty last line; an empty line in between does.
  EXPECT_EQ(Lines("a\n\nb\n"), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(Lines(""), std::vector<std::string>{});
  // Form feed, vertical tab, file separator, NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR.
  EXPECT_EQ(Lines("a\fb\vc\x1c"
                  "d\xc2\x85"
                  "e\xe2\x80\xa8"
                  "f\xe2\x80\xa9g"),
            (std::vector<std::string>{"a", "b", "c", "d", "e", "f", "g"}));
  // Invalid UTF-8 stays inside its line.
  EXPECT_EQ(Lines("a\xff\xfe\nb"), (std::vector<std::string>{"a\xff\xfe", "b"}));
}

TEST(PyText, FileLinesUseUniversalNewlinesOnly) {
  auto lines = SplitFileLines("a\fb\r\nc\rd");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "a\fb");
  EXPECT_EQ(lines[2], "d");
}

TEST(PyText, StripUsesUnicodeWhitespace) {
  EXPECT_EQ(Strip("  \t[BEGIN]\r\n"), "[BEGIN]");
  EXPECT_EQ(Strip("\xc2\xa0[DONE]\xe2\x80\x83"), "[DONE]");  // NBSP, EM SPACE
  EXPECT_EQ(LStrip("  x  "), "x  ");
  EXPECT_EQ(RStrip("  x  "), "  x");
  EXPECT_EQ(Strip("\x1f\x1ex"), "x");
  EXPECT_EQ(Strip("\xe2\x80\x8bx"), "\xe2\x80\x8bx");  // ZERO WIDTH SPACE is not whitespace
  EXPECT_EQ(Strip("   "), "");
}

TEST(PyText, ReplaceAllAndJoin) {
  EXPECT_EQ(ReplaceAll("[BEGIN]a[BEGIN]", "[BEGIN]", ""), "a");
  EXPECT_EQ(JoinLines({"a", "", "b"}), "a\n\nb");
}

}  // namespace
}  // namespace evald::py
