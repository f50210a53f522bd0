#include "base/verilog_identifier.h"

namespace evald {

namespace {

// Whether text[at, at + length) has no identifier character on either side.
bool IsWholeAt(std::string_view text, size_t at, size_t length) {
  const size_t end = at + length;
  return (at == 0 || !IsIdentifierChar(text[at - 1])) &&
         (end >= text.size() || !IsIdentifierChar(text[end]));
}

}  // namespace

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$';
}

std::string_view LeadingIdentifier(std::string_view text) {
  size_t n = 0;
  while (n < text.size() && IsIdentifierChar(text[n])) ++n;
  return text.substr(0, n);
}

bool MentionsIdentifier(std::string_view text, std::string_view name) {
  if (name.empty()) return false;
  for (size_t at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1))
    if (IsWholeAt(text, at, name.size())) return true;
  return false;
}

std::string RenameIdentifier(std::string_view text, std::string_view name, std::string_view to,
                             int* renamed) {
  if (renamed != nullptr) *renamed = 0;
  if (name.empty()) return std::string(text);
  std::string out;
  size_t pos = 0;
  for (size_t hit = text.find(name); hit != std::string_view::npos; hit = text.find(name, pos)) {
    const bool whole = IsWholeAt(text, hit, name.size());
    out.append(text, pos, hit - pos);
    out.append(whole ? to : name);
    if (whole && renamed != nullptr) ++*renamed;
    pos = hit + name.size();
  }
  out.append(text, pos, std::string_view::npos);
  return out;
}

}  // namespace evald
