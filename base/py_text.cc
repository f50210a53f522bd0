#include "base/py_text.h"

#include <cstdint>

namespace evald::py {

namespace {

// Decodes one UTF-8 code point at s[i]; returns its length (1 for invalid bytes, which
// then decode to a value no whitespace/line-break test matches).
size_t DecodeAt(std::string_view s, size_t i, uint32_t* cp) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t len = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || i + len > s.size()) {
    *cp = 0xFFFFFFFF;
    return 1;
  }
  uint32_t v = c & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc >> 6) != 2) {
      *cp = 0xFFFFFFFF;
      return 1;
    }
    v = (v << 6) | (cc & 0x3F);
  }
  *cp = v;
  return len;
}

// Code points for which Python's str.isspace() is true.
bool IsPySpace(uint32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x1C:
    case 0x1D:
    case 0x1E:
    case 0x1F:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

// Line boundaries of str.splitlines().
bool IsPyLineBreak(uint32_t cp) {
  switch (cp) {
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x1C:
    case 0x1D:
    case 0x1E:
    case 0x85:
    case 0x2028:
    case 0x2029:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0, i = 0;
  while (i < text.size()) {
    uint32_t cp;
    size_t len = DecodeAt(text, i, &cp);
    if (IsPyLineBreak(cp)) {
      lines.push_back(text.substr(start, i - start));
      if (cp == '\r' && i + 1 < text.size() && text[i + 1] == '\n') len = 2;
      i += len;
      start = i;
    } else {
      i += len;
    }
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

std::vector<std::string_view> SplitFileLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n' && text[i] != '\r') continue;
    lines.push_back(text.substr(start, i - start));
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    start = i + 1;
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

std::string TranslateNewlines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r') {
      out.push_back(text[i]);
      continue;
    }
    out.push_back('\n');
    if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
  }
  return out;
}

std::string_view LStrip(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    uint32_t cp;
    size_t len = DecodeAt(s, i, &cp);
    if (!IsPySpace(cp)) break;
    i += len;
  }
  return s.substr(i);
}

std::string_view RStrip(std::string_view s) {
  // Walk forward remembering where the trailing whitespace run starts (UTF-8 is not
  // safely decodable backwards when it may be invalid).
  size_t i = 0, keep = 0;
  while (i < s.size()) {
    uint32_t cp;
    size_t len = DecodeAt(s, i, &cp);
    i += len;
    if (!IsPySpace(cp)) keep = i;
  }
  return s.substr(0, keep);
}

std::string_view Strip(std::string_view s) {
  return RStrip(LStrip(s));
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    out += lines[i];
  }
  return out;
}

std::string ReplaceAll(std::string_view s, std::string_view from, std::string_view to) {
  if (from.empty()) return std::string(s);
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t hit = s.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(s.substr(pos));
  return out;
}

std::vector<std::string_view> SplitBlanks(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace evald::py
