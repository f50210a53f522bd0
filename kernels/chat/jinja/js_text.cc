#include "kernels/chat/jinja/js_text.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace evald::kernels::jinja {

bool IsJsWhiteSpace(uint32_t c) {
  if (c <= 32) return c == 32 || (c >= 9 && c <= 13);
  return c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000 || c == 0xFEFF;
}

uint32_t DecodeCodePoint(std::string_view s, size_t* pos) {
  const size_t i = *pos;
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    *pos = i + 1;
    return b0;
  }
  int length = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC0 ? 2 : 0;
  if (length == 0 || i + static_cast<size_t>(length) > s.size()) {
    *pos = i + 1;
    return 0xFFFD;
  }
  uint32_t cp = b0 & (0x7F >> length);
  for (int k = 1; k < length; ++k) {
    if ((byte(i + static_cast<size_t>(k)) & 0xC0) != 0x80) {
      *pos = i + 1;
      return 0xFFFD;
    }
    cp = (cp << 6) | (byte(i + static_cast<size_t>(k)) & 0x3F);
  }
  *pos = i + static_cast<size_t>(length);
  return cp;
}

void AppendCodePoint(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::vector<std::string_view> CodePoints(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t p = 0; p < text.size();) {
    size_t start = p;
    DecodeCodePoint(text, &p);
    out.push_back(text.substr(start, p - start));
  }
  return out;
}

std::string_view JsTrimStart(std::string_view text) {
  size_t p = 0;
  while (p < text.size()) {
    size_t next = p;
    if (!IsJsWhiteSpace(DecodeCodePoint(text, &next))) break;
    p = next;
  }
  return text.substr(p);
}

std::string_view JsTrimEnd(std::string_view text) {
  size_t end = text.size();
  while (end > 0) {
    size_t start = end - 1;  // back to the lead byte of the last character
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80 && end - start < 4)
      --start;
    size_t p = start;
    uint32_t cp = DecodeCodePoint(text, &p);
    if (p != end || !IsJsWhiteSpace(cp)) break;
    end = start;
  }
  return text.substr(0, end);
}

std::string_view JsTrim(std::string_view text) {
  return JsTrimEnd(JsTrimStart(text));
}

bool IsAscii(std::string_view text) {
  for (char c : text)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

size_t Utf16Length(std::string_view text) {
  size_t n = 0;
  for (size_t p = 0; p < text.size();) n += DecodeCodePoint(text, &p) >= 0x10000 ? 2 : 1;
  return n;
}

std::u16string ToUtf16(std::string_view text) {
  std::u16string out;
  for (size_t p = 0; p < text.size();) {
    uint32_t cp = DecodeCodePoint(text, &p);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(cp));
    }
  }
  return out;
}

// ECMAScript's Number::toString: the shortest digits that round-trip, laid out by the
// decimal exponent n (value = 0.d1d2... x 10^n).
std::string JsNumberToString(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0) return "0";
  std::string sign = v < 0 ? "-" : "";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific);
  std::string sci(buf, r.ptr);  // d.ddde+XX
  size_t e_pos = sci.find('e');
  std::string digits = sci.substr(0, 1) + (e_pos > 2 ? sci.substr(2, e_pos - 2) : "");
  int exponent = std::atoi(sci.c_str() + e_pos + 1);
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;
  if (k <= n && n <= 21) return sign + digits + std::string(static_cast<size_t>(n - k), '0');
  if (0 < n && n <= 21)
    return sign + digits.substr(0, static_cast<size_t>(n)) + "." +
           digits.substr(static_cast<size_t>(n));
  if (-6 < n && n <= 0) return sign + "0." + std::string(static_cast<size_t>(-n), '0') + digits;
  std::string exp = (n - 1 >= 0 ? "+" : "-") + std::to_string(std::abs(n - 1));
  if (k == 1) return sign + digits + "e" + exp;
  return sign + digits.substr(0, 1) + "." + digits.substr(1) + "e" + exp;
}

std::string JsFloatToString(double v) {
  if (v == 0 && std::signbit(v)) return "-0.0";
  if (std::isfinite(v) && std::fmod(v, 1.0) == 0) {
    if (std::fabs(v) >= 1e21) return JsNumberToString(v);  // toFixed falls back to toString
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
  }
  return JsNumberToString(v);
}

std::string JsonQuote(std::string_view text) {
  std::string out = "\"";
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[16];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out.push_back(ch);
        }
    }
  }
  out += '"';
  return out;
}

std::string JsonAsciiSafe(std::string_view json) {
  std::string out;
  for (size_t p = 0; p < json.size();) {
    uint32_t cp = DecodeCodePoint(json, &p);
    if (cp < 0x7F) {
      out.push_back(static_cast<char>(cp));
      continue;
    }
    auto unit = [&](uint32_t u) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\u%04x", u & 0xFFFFu);
      out += buf;
    };
    if (cp >= 0x10000) {
      unit(0xD800 + ((cp - 0x10000) >> 10));
      unit(0xDC00 + ((cp - 0x10000) & 0x3FF));
    } else {
      unit(cp);
    }
  }
  return out;
}

namespace {

// The longest prefix of `s` that is a StrDecimalLiteral without its sign: digits, a fraction,
// an exponent. Returns its length (0: none).
size_t DecimalPrefix(std::string_view s) {
  size_t i = 0, digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    size_t j = i + 1;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j, ++digits;
    if (digits > 0) i = j;
  }
  if (digits == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    size_t k = j;
    while (k < s.size() && s[k] >= '0' && s[k] <= '9') ++k;
    if (k > j) i = k;
  }
  return i;
}

// A signed decimal literal or Infinity at the start of `s`; `*used` its length (0: none).
double ParseSignedDecimal(std::string_view s, size_t* used) {
  size_t i = 0;
  double sign = 1;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) sign = s[i++] == '-' ? -1 : 1;
  if (s.substr(i).starts_with("Infinity")) {
    *used = i + 8;
    return sign * INFINITY;
  }
  size_t n = DecimalPrefix(s.substr(i));
  if (n == 0) {
    *used = 0;
    return NAN;
  }
  *used = i + n;
  return sign * std::strtod(std::string(s.substr(i, n)).c_str(), nullptr);
}

}  // namespace

double JsStringToNumber(std::string_view text, bool* unsupported) {
  *unsupported = false;
  std::string_view s = JsTrim(text);
  if (s.empty()) return 0;
  if (s.size() > 1 && s[0] == '0' &&
      std::string_view("xXoObB").find(s[1]) != std::string_view::npos) {
    *unsupported = true;
    return NAN;
  }
  size_t used = 0;
  double v = ParseSignedDecimal(s, &used);
  return used == s.size() ? v : NAN;
}

double JsParseInt(std::string_view text) {
  std::string_view s = JsTrimStart(text);
  size_t i = 0;
  double sign = 1;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) sign = s[i++] == '-' ? -1 : 1;
  size_t start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == start) return NAN;
  return sign * std::strtod(std::string(s.substr(start, i - start)).c_str(), nullptr);
}

double JsParseFloat(std::string_view text) {
  size_t used = 0;
  double v = ParseSignedDecimal(JsTrimStart(text), &used);
  return used == 0 ? NAN : v;
}

}  // namespace evald::kernels::jinja
