#include "harness/judge_renaming.h"

#include <vector>

#include "harness/verilog_keywords.h"
#include "harness/verilog_lexer.h"

namespace evald {

namespace {

using Kind = VerilogToken::Kind;
using NameSet = std::set<std::string, std::less<>>;

bool IsPunct(const std::vector<VerilogToken>& t, size_t i, char c) {
  return i < t.size() && t[i].kind == Kind::kPunct && t[i].text[0] == c;
}
// `pkg::name` or `name::member` (two adjacent colons).
bool ScopeOperatorBefore(const std::vector<VerilogToken>& t, size_t i) {
  return i >= 2 && IsPunct(t, i - 1, ':') && IsPunct(t, i - 2, ':');
}
bool ScopeOperatorAfter(const std::vector<VerilogToken>& t, size_t i) {
  return IsPunct(t, i + 1, ':') && IsPunct(t, i + 2, ':');
}

// Identifiers that must keep their names: macro names, directive arguments, built-in names.
NameSet Unrenamable(const std::vector<VerilogToken>& t) {
  NameSet keep = {"std"};
  int directive_line = -1;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind == Kind::kDirective) {
      const auto d = t[i].text;
      if ((d == "define" || d == "undef" || d == "ifdef" || d == "ifndef" || d == "elsif") &&
          i + 1 < t.size())
        keep.emplace(t[i + 1].text);
      directive_line =
          (d == "timescale" || d == "default_nettype" || d == "unconnected_drive") ? t[i].line : -1;
      continue;
    }
    if (t[i].kind == Kind::kIdentifier && t[i].line == directive_line) keep.emplace(t[i].text);
  }
  return keep;
}

// The digits of a based literal written apart from its tick: 'x, 'hFF, 8'h FF.
bool PartOfLiteral(const std::vector<VerilogToken>& t, size_t i) {
  if (i == 0) return false;
  const VerilogToken& before = t[i - 1];
  if (before.kind == Kind::kPunct && before.text == "'") return true;
  if (before.kind != Kind::kNumber) return false;
  const size_t tick = before.text.find('\'');
  if (tick == std::string_view::npos) return false;
  std::string_view base = before.text.substr(tick + 1);
  if (!base.empty() && (base[0] == 's' || base[0] == 'S')) base.remove_prefix(1);
  return base.size() == 1;
}

// Names that appear somewhere other than right after '.' or around '::': the judge's own.
NameSet JudgeNames(const std::vector<VerilogToken>& t) {
  NameSet names;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind != Kind::kIdentifier || (IsVerilogKeyword(t[i].text) && !t[i].escaped)) continue;
    if (PartOfLiteral(t, i)) continue;
    const bool scoped = ScopeOperatorBefore(t, i) || ScopeOperatorAfter(t, i);
    if (!(i > 0 && IsPunct(t, i - 1, '.')) && !scoped) names.emplace(t[i].text);
  }
  return names;
}

}  // namespace

std::string RenameJudgeNames(std::string_view text, const NameSet& keep, const std::string& nonce) {
  const auto tokens = TokenizeVerilog(text);
  const NameSet fixed = Unrenamable(tokens);
  const NameSet names = JudgeNames(tokens);
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  size_t copied = 0;  // bytes of `text` already in `out`
  for (const auto& tok : tokens) {
    const size_t index = static_cast<size_t>(&tok - tokens.data());
    if (tok.kind != Kind::kIdentifier || (IsVerilogKeyword(tok.text) && !tok.escaped)) continue;
    if (PartOfLiteral(tokens, index)) continue;
    if (!names.count(tok.text) || fixed.count(tok.text) || keep.count(tok.text)) continue;
    const size_t at = static_cast<size_t>(tok.text.data() - text.data());
    out.append(text.substr(copied, at - copied));
    out.append(tok.text);
    out += "_" + nonce;
    copied = at + tok.text.size();
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace evald
