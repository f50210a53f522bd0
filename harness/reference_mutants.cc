#include "harness/reference_mutants.h"

#include <map>
#include <set>

#include "harness/verilog_lexer.h"

namespace evald {

namespace {

using Kind = VerilogToken::Kind;

struct Edit {
  size_t at, length;
  std::string replacement;
};

// Collects mutants, at most `per_kind` of each kind, none alike.
class MutantSet {
 public:
  MutantSet(const std::string& design, size_t per_kind) : design_(design), per_kind_(per_kind) {}

  void Add(const std::string& kind, int line, const Edit& e, const std::string& what) {
    if (count_[kind] >= per_kind_) return;
    std::string text = design_.substr(0, e.at) + e.replacement + design_.substr(e.at + e.length);
    if (text == design_ || !seen_.insert(text).second) return;
    ++count_[kind];
    out_.push_back({kind, "line " + std::to_string(line) + ": " + what, std::move(text)});
  }
  std::vector<Mutant> Take() { return std::move(out_); }

 private:
  const std::string& design_;
  size_t per_kind_;
  std::map<std::string, size_t> count_;
  std::set<std::string> seen_;
  std::vector<Mutant> out_;
};

class Scanner {
 public:
  Scanner(const std::string& design, MutantSet* set)
      : design_(design), tokens_(TokenizeVerilog(design)), set_(set) {}

  void Run() {
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const VerilogToken& t = tokens_[i];
      if (t.kind == Kind::kPunct) Operators(i);
      if (t.kind == Kind::kNumber) Constant(i);
      if (t.kind == Kind::kIdentifier) Identifier(i);
    }
  }

 private:
  size_t Offset(size_t i) const {
    return static_cast<size_t>(tokens_[i].text.data() - design_.data());
  }
  // Token i + 1 (or i - 1) is the punctuation `c` with no blank between it and token i.
  bool Next(size_t i, char c) const {
    return i + 1 < tokens_.size() && tokens_[i + 1].kind == Kind::kPunct &&
           tokens_[i + 1].text[0] == c && Offset(i + 1) == Offset(i) + 1;
  }
  bool Prev(size_t i, char c) const {
    return i > 0 && tokens_[i - 1].kind == Kind::kPunct && tokens_[i - 1].text[0] == c &&
           Offset(i - 1) + 1 == Offset(i);
  }
  bool Alone(size_t i) const {
    static const std::string kOperatorChars = "&|^~+-=<>!:*/%?";
    for (char c : kOperatorChars)
      if (Next(i, c) || Prev(i, c)) return false;
    return true;
  }
  void Replace(const std::string& kind, size_t i, size_t length, const std::string& to) {
    const std::string from = design_.substr(Offset(i), length);
    set_->Add(kind, tokens_[i].line, {Offset(i), length, to}, "'" + from + "' -> '" + to + "'");
  }

  void Operators(size_t i) {
    const char c = tokens_[i].text[0];
    if ((c == '=' && Next(i, '=') && !Next(i + 1, '=') && !Prev(i, '=') && !Prev(i, '!') &&
         !Prev(i, '<') && !Prev(i, '>')))
      Replace("operator", i, 2, "!=");
    if (c == '!' && Next(i, '=') && !Next(i + 1, '=')) Replace("operator", i, 2, "==");
    if (c == '&' && Next(i, '&') && !Next(i + 1, '&')) Replace("operator", i, 2, "||");
    if (c == '|' && Next(i, '|')) Replace("operator", i, 2, "&&");
    if (!Alone(i)) return;
    switch (c) {
      case '&':
        Replace("operator", i, 1, "|");
        break;
      case '|':
        Replace("operator", i, 1, "&");
        break;
      case '^':
        Replace("operator", i, 1, "|");
        break;
      case '+':
        Replace("operator", i, 1, "-");
        break;
      case '-':
        Replace("operator", i, 1, "+");
        break;
      case '~':
      case '!':
        Replace("negation", i, 1, "");
        break;
      default:
        break;
    }
  }

  // The last digit of a literal changed: 1'b0 -> 1'b1, 4'd9 -> 4'd8, 8'hff -> 8'hfe, 10 -> 11.
  // Inside [ ] the constant is a width or an index.
  void Constant(size_t i) {
    std::string text(tokens_[i].text);
    size_t quote = text.find('\'');
    char base = quote == std::string::npos || quote + 1 >= text.size() ? 'd' : text[quote + 1];
    char& last = text.back();
    const bool hex_letter = (last >= 'a' && last <= 'f') || (last >= 'A' && last <= 'F');
    if ((base == 'h' || base == 'H') && hex_letter) {
      // a<->b, c<->d, e<->f (digit values 10..15 with their low bit flipped).
      last =
          static_cast<char>(((last - (last >= 'a' ? 'a' : 'A')) ^ 1) + (last >= 'a' ? 'a' : 'A'));
    } else if (last >= '0' && last <= '9') {
      last = static_cast<char>(last ^ 1);
    } else {
      return;
    }
    const bool width = InBrackets(i);
    // A port's width is the problem's interface, which the testbench binds: not a mutant.
    if (width && InPortDeclaration(i)) return;
    Replace(width ? "width" : "constant", i, tokens_[i].text.size(), text);
  }
  // In the module header (up to its first ';') or a statement starting input/output/inout.
  bool InPortDeclaration(size_t i) const {
    size_t start = i;
    while (start > 0 && tokens_[start - 1].text != ";") --start;
    if (start == 0) return true;  // the header
    const std::string_view first = tokens_[start].text;
    return first == "input" || first == "output" || first == "inout";
  }
  bool InBrackets(size_t i) const {
    for (size_t j = i; j-- > 0 && i - j < 6;) {
      if (tokens_[j].kind != Kind::kPunct) continue;
      if (tokens_[j].text[0] == '[') return true;
      if (tokens_[j].text[0] == ']' || tokens_[j].text[0] == ';') return false;
    }
    return false;
  }

  void Identifier(size_t i) {
    const std::string_view id = tokens_[i].text;
    if (id == "posedge") Replace("edge", i, id.size(), "negedge");
    if (id == "negedge") Replace("edge", i, id.size(), "posedge");
    // if (reset) -> if (!reset): the reset's polarity.
    const bool reset_name = id.find("reset") != std::string_view::npos || id == "rst" ||
                            id == "rstn" || id == "ar" || id == "r";
    if (reset_name && i >= 2 && tokens_[i - 1].text == "(" && tokens_[i - 2].text == "if")
      set_->Add("reset-polarity", tokens_[i].line, {Offset(i), 0, "!"},
                "'if (" + std::string(id) + ")' -> 'if (!" + std::string(id) + ")'");
    Transition(i);
  }

  // `next = A;` (or `<=`) -> `next = B;` where B is the first other upper-case name given a
  // value with `=` (a localparam or enum state): an FSM's transition sent to another state.
  void Transition(size_t i) {
    if (i < 2 || i + 1 >= tokens_.size() || tokens_[i + 1].text != ";") return;
    // `=` or `<=`, not `==` or `!=`.
    const bool assigned = tokens_[i - 1].text == "=" && !Prev(i - 1, '=') && !Prev(i - 1, '!');
    if (!assigned) return;
    for (const VerilogToken& other : tokens_) {
      if (other.kind != Kind::kIdentifier || other.text == tokens_[i].text) continue;
      if (!IsStateName(tokens_, other.text)) continue;
      Replace("transition", i, tokens_[i].text.size(), std::string(other.text));
      return;
    }
  }
  static bool IsStateName(const std::vector<VerilogToken>& tokens, std::string_view name) {
    // A name declared by localparam/parameter or an enum: upper-case by convention here.
    if (name.empty() || !(name[0] >= 'A' && name[0] <= 'Z')) return false;
    for (char c : name)
      if (c >= 'a' && c <= 'z') return false;
    for (size_t j = 0; j + 1 < tokens.size(); ++j)
      if (tokens[j].text == name && tokens[j + 1].text == "=") return true;
    return false;
  }

  const std::string& design_;
  std::vector<VerilogToken> tokens_;
  MutantSet* set_;
};

}  // namespace

std::vector<Mutant> MutateDesign(const std::string& design, size_t per_kind) {
  if (design.size() > kMaxLexedBytes) return {};
  MutantSet set(design, per_kind);
  Scanner(design, &set).Run();
  return set.Take();
}

}  // namespace evald
