#include "base/utf8.h"

namespace evald {

namespace {

// Length of the valid sequence starting at text[i], or 0 if invalid / truncated.
size_t ValidSequence(std::string_view text, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t len;
  unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  return len;
}

}  // namespace

std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t len = ValidSequence(text, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

size_t Utf8SafeCut(std::string_view text, size_t limit) {
  if (limit >= text.size()) limit = text.size();
  // Walk back over at most 3 continuation bytes to the start of the last character.
  size_t start = limit;
  for (int k = 0; k < 4 && start > 0; ++k) {
    unsigned char c = static_cast<unsigned char>(text[start - 1]);
    if ((c & 0xC0) != 0x80) {
      --start;
      break;
    }
    --start;
  }
  if (start >= limit) return limit;
  unsigned char lead = static_cast<unsigned char>(text[start]);
  size_t need = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return start + need <= limit ? limit : start;
}

}  // namespace evald
