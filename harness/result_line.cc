#include "harness/result_line.h"

#include <algorithm>
#include <cstdint>

namespace evald {

namespace {

constexpr std::string_view kHead = "Mismatches:";

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == '\n';
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

// Reads a run of digits at s[*pos]; -1 when the value does not fit (the digits are still
// consumed, so the caller's scan stays linear). False when there is no digit.
bool ReadNumber(std::string_view s, size_t* pos, int64_t* value, std::string_view* digits) {
  size_t start = *pos;
  int64_t v = 0;
  bool overflow = false;
  while (*pos < s.size() && IsDigit(s[*pos])) {
    int d = s[*pos] - '0';
    if (v > (INT64_MAX - d) / 10) overflow = true;
    if (!overflow) v = v * 10 + d;
    ++*pos;
  }
  if (*pos == start) return false;
  *value = overflow ? -1 : v;
  *digits = s.substr(start, *pos - start);
  return true;
}

// Skips blanks; false when `required` and there were none.
bool SkipBlanks(std::string_view s, size_t* pos, bool required) {
  size_t start = *pos;
  while (*pos < s.size() && IsBlank(s[*pos])) ++*pos;
  return !required || *pos > start;
}

bool Expect(std::string_view s, size_t* pos, std::string_view word) {
  if (s.substr(*pos, word.size()) != word) return false;
  *pos += word.size();
  return true;
}

// Parses the pattern right after "Mismatches:". `exact`: single spaces and the line's end.
std::optional<ResultCounts> ParseAfterHead(std::string_view s, size_t pos, bool exact,
                                           size_t* stopped) {
  ResultCounts r;
  std::string_view digits, unused;
  auto fail = [&]() -> std::optional<ResultCounts> {
    *stopped = pos;
    return std::nullopt;
  };
  if (exact ? !Expect(s, &pos, " ") : !SkipBlanks(s, &pos, false)) return fail();
  if (!ReadNumber(s, &pos, &r.mismatches, &digits)) return fail();
  r.zero_mismatches = digits == "0";
  if (exact ? !Expect(s, &pos, " in ")
            : !(SkipBlanks(s, &pos, true) && Expect(s, &pos, "in") && SkipBlanks(s, &pos, true)))
    return fail();
  if (!ReadNumber(s, &pos, &r.samples, &unused)) return fail();
  if (exact ? !Expect(s, &pos, " samples")
            : !(SkipBlanks(s, &pos, true) && Expect(s, &pos, "samples")))
    return fail();
  if (exact && pos != s.size()) return fail();
  *stopped = pos;
  return r;
}

}  // namespace

std::optional<ResultCounts> MatchResultLine(std::string_view line) {
  if (line.substr(0, kHead.size()) != kHead) return std::nullopt;
  size_t stopped = 0;
  return ParseAfterHead(line, kHead.size(), true, &stopped);
}

std::optional<ResultCounts> FindResultLine(std::string_view line) {
  size_t from = 0;
  while (true) {
    size_t hit = line.find(kHead, from);
    if (hit == std::string_view::npos) return std::nullopt;
    size_t stopped = hit + kHead.size();
    auto r = ParseAfterHead(line, hit + kHead.size(), false, &stopped);
    if (r) return r;
    // Blanks and digits hold no "Mismatches:", so resuming where the parse stopped keeps the
    // whole search linear.
    from = std::max(stopped, hit + 1);
  }
}

}  // namespace evald
