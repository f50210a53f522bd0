#include "harness/procedural_regions.h"

#include "harness/token_view.h"

#include <initializer_list>
#include <string_view>

namespace evald {

namespace {

using Kind = VerilogToken::Kind;

class Walker : private TokenView {
 public:
  explicit Walker(const std::vector<VerilogToken>& tokens) : TokenView(tokens) {
    regions_.procedural.assign(n_, false);
  }

  ProceduralRegions Run() {
    for (size_t i = 0; i < n_ && !regions_.too_deep;) {
      if (IsAny(i, {"initial", "always", "always_comb", "always_ff", "always_latch", "final"})) {
        i = Mark(i + 1, Statement(i + 1, 0));
      } else if (IsAny(i, {"task", "function"}) && !Prototype(i)) {
        i = Mark(i + 1,
                 MatchBlock(i, t_[i].text, t_[i].text == "task" ? "endtask" : "endfunction"));
      } else {
        ++i;
      }
    }
    return std::move(regions_);
  }

 private:
  bool ModuleBoundary(size_t i) const {
    return IsAny(i, {"module", "macromodule", "endmodule", "program", "endprogram", "interface",
                     "endinterface", "package", "endpackage"});
  }
  // extern/pure/DPI prototypes of tasks and functions have no body.
  bool Prototype(size_t i) const {
    for (size_t back = 1; back <= 2 && back <= i; ++back)
      if (IsAny(i - back, {"extern", "pure", "import", "export"})) return true;
    return false;
  }

  size_t Mark(size_t from, size_t to) {
    for (size_t k = from; k < to && k < n_; ++k) regions_.procedural[k] = true;
    return to > from ? to : from + 1;
  }

  // Index after the bracket group opened at i ('(' / '[' / '{'), or i when none opens there.
  size_t SkipGroup(size_t i) const {
    if (!Opens(i)) return i;
    int depth = 0;
    for (; i < n_; ++i) {
      if (Opens(i)) ++depth;
      if (Closes(i)) {
        if (--depth == 0) return i + 1;
      }
      if (ModuleBoundary(i)) return i;
    }
    return n_;
  }

  // Index after the closer matching the opener at i (nested openers counted).
  size_t MatchBlock(size_t i, std::string_view opener, std::string_view closer) const {
    int depth = 0;
    for (; i < n_; ++i) {
      if (Is(i, opener)) ++depth;
      if (Is(i, closer) && --depth == 0) {
        ++i;
        if (Punct(i, ':') && i + 1 < n_) i += 2;  // end : label
        return i;
      }
      if (ModuleBoundary(i)) return i;
    }
    return n_;
  }

  size_t MatchCase(size_t i) const {
    int depth = 0;
    for (; i < n_; ++i) {
      if (IsAny(i, {"case", "casex", "casez", "randcase"})) ++depth;
      if (Is(i, "endcase") && --depth == 0) return i + 1;
      if (ModuleBoundary(i)) return i;
    }
    return n_;
  }

  size_t MatchFork(size_t i) const {
    int depth = 0;
    for (; i < n_; ++i) {
      if (Is(i, "fork")) ++depth;
      if (IsAny(i, {"join", "join_any", "join_none"}) && --depth == 0) {
        ++i;
        if (Punct(i, ':') && i + 1 < n_) i += 2;
        return i;
      }
      if (ModuleBoundary(i)) return i;
    }
    return n_;
  }

  // A simple statement: up to its ';' outside brackets.
  size_t ToSemicolon(size_t i) const {
    while (i < n_ && !Punct(i, ';') && !ModuleBoundary(i)) {
      size_t next = SkipGroup(i);
      i = next > i ? next : i + 1;
    }
    return Punct(i, ';') ? i + 1 : i;
  }

  // Event and delay controls, labels and unique/priority in front of a statement.
  size_t SkipPrefixes(size_t i) const {
    while (i < n_) {
      if (Punct(i, '@')) {
        ++i;
        if (Punct(i, '(')) {
          i = SkipGroup(i);
        } else if (Punct(i, '*')) {
          ++i;
        } else {
          while (i < n_ && (t_[i].kind == Kind::kIdentifier || Punct(i, '.'))) ++i;
        }
      } else if (Punct(i, '#')) {
        ++i;
        if (Punct(i, '#')) ++i;
        i = Punct(i, '(') ? SkipGroup(i) : i + 1;
      } else if (IsAny(i, {"unique", "unique0", "priority"})) {
        ++i;
      } else if (i + 2 < n_ && t_[i].kind == Kind::kIdentifier && Punct(i + 1, ':') &&
                 !Punct(i + 2, ':')) {
        i += 2;  // label:
      } else {
        return i;
      }
    }
    return i;
  }

  // Index after the statement starting at i.
  size_t Statement(size_t i, int depth) {
    if (depth > kMaxStatementNesting) {
      regions_.too_deep = true;
      regions_.too_deep_line = i < n_ ? t_[i].line : 0;
      return n_;
    }
    i = SkipPrefixes(i);
    if (i >= n_) return n_;
    if (Is(i, "begin")) return MatchBlock(i, "begin", "end");
    if (Is(i, "fork")) return MatchFork(i);
    if (IsAny(i, {"case", "casex", "casez", "randcase"})) return MatchCase(i);
    if (IsAny(i, {"if", "assert", "assume", "cover"})) return IfChain(i, depth);
    if (IsAny(i, {"for", "while", "repeat", "foreach"}))
      return Statement(SkipGroup(i + 1), depth + 1);
    if (Is(i, "forever")) return Statement(i + 1, depth + 1);
    if (Is(i, "wait")) {
      if (Is(i + 1, "fork")) return ToSemicolon(i);
      return Statement(SkipGroup(i + 1), depth + 1);
    }
    if (Is(i, "do")) {
      i = Statement(i + 1, depth + 1);
      if (Is(i, "while")) i = SkipGroup(i + 1);
      return Punct(i, ';') ? i + 1 : i;
    }
    return ToSemicolon(i);
  }

  // if (c) s [else if (c) s]... [else s], followed iteratively so that a long chain of
  // else-ifs does not nest. assert/assume/cover (expr) [pass] [else fail] has the same shape.
  size_t IfChain(size_t i, int depth) {
    while (true) {
      ++i;  // if / assert
      while (IsAny(i, {"property", "final"}) || Punct(i, '#')) i += Punct(i, '#') ? 2 : 1;
      i = SkipGroup(i);
      if (!Is(i, "else")) i = Statement(i, depth + 1);
      if (!Is(i, "else")) return i;
      ++i;
      if (!Is(i, "if")) return Statement(i, depth + 1);
    }
  }

  ProceduralRegions regions_;
};

}  // namespace

ProceduralRegions FindProceduralRegions(const std::vector<VerilogToken>& tokens) {
  return Walker(tokens).Run();
}

}  // namespace evald
