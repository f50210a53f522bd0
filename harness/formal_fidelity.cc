#include "harness/formal_fidelity.h"

#include <initializer_list>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "harness/procedural_regions.h"
#include "harness/token_view.h"
#include "harness/verilog_keywords.h"
#include "harness/verilog_lexer.h"

namespace evald {

namespace {

using Names = std::unordered_set<std::string_view>;

// Words whose meaning Yosys does not share with the simulator (or does not read at all).
const Names& UnmodelledWords() {
  static const Names* words =
      new Names{// timing and process control
                "wait", "wait_order", "fork", "disable", "event", "specify", "specparam", "expect",
                // drive and charge strengths
                "strong0", "strong1", "pull0", "pull1", "weak0", "weak1", "highz0", "highz1",
                "small", "medium", "large",
                // switch-level primitives and pulls
                "tran", "tranif0", "tranif1", "rtran", "rtranif0", "rtranif1", "nmos", "pmos",
                "cmos", "rnmos", "rpmos", "rcmos", "pullup", "pulldown",
                // resolved net types
                "tri", "tri0", "tri1", "triand", "trior", "trireg", "wand", "wor", "interconnect"};
  return *words;
}

class FidelityWalker : private TokenView {
 public:
  explicit FidelityWalker(const std::vector<VerilogToken>& tokens)
      : TokenView(tokens), regions_(FindProceduralRegions(tokens)) {}

  FidelityFinding Run() {
    if (regions_.too_deep) return Refuse(regions_.too_deep_line, "statements nested too deeply");
    MatchBrackets();
    CollectConstants();
    for (size_t i = 0; i < n_ && finding_.faithful;) i = Step(i);
    if (finding_.faithful) CheckClockedRaces();
    return finding_;
  }

 private:
  bool Procedural(size_t i) const { return i < n_ && regions_.procedural[i]; }
  // The index after the procedural code that starts at i (an always block's body).
  size_t ProceduralEnd(size_t i) const {
    while (i < n_ && Procedural(i)) ++i;
    return i;
  }

  FidelityFinding Refuse(int line, const std::string& what) {
    if (finding_.faithful) {
      finding_.faithful = false;
      finding_.reason = "line " + std::to_string(line) + ": " + what;
    }
    return finding_;
  }
  size_t RefuseAt(size_t i, const std::string& what) {
    Refuse(Line(i), what);
    return n_;
  }

  // Index after the bracket group opened at i, or i when none opens there: from a table made
  // in one pass, so that no walk here looks at a token more than a few times.
  size_t SkipGroup(size_t i) const { return i < n_ && after_group_[i] ? after_group_[i] : i; }

  void MatchBrackets() {
    after_group_.assign(n_, 0);
    std::vector<size_t> open;
    for (size_t i = 0; i < n_; ++i) {
      if (Opens(i)) {
        open.push_back(i);
        after_group_[i] = n_;  // unless closed
      } else if (Closes(i) && !open.empty()) {
        after_group_[open.back()] = i + 1;
        open.pop_back();
      }
    }
  }

  size_t Step(size_t i) {
    if (Word(i) && !t_[i].escaped && UnmodelledWords().count(t_[i].text))
      return RefuseAt(i, "`" + std::string(t_[i].text) + "`, which formal does not model");
    if (IsAny(i, {"always", "always_ff", "always_comb", "always_latch"}) && Procedural(i))
      return RefuseAt(i, "an always block inside a statement");
    if (IsAny(i, {"always", "always_ff"})) return AlwaysHead(i);
    if (Punct(i, '#')) {
      // Outside statements, `#(` after a module's name gives parameter values; anything
      // else is a delay, which Yosys drops and the simulator keeps.
      if (!Procedural(i) && Punct(i + 1, '(') && i > 0 && Word(i - 1) && !Keyword(i - 1))
        return i + 1;
      return RefuseAt(i, "a delay (#), which Yosys ignores and the simulator does not");
    }
    if (Punct(i, '@'))
      return RefuseAt(i, "an event control inside a statement, which Yosys ignores");
    if (Procedural(i) && Punct(i, '-') && Adjacent(i) && Punct(i + 1, '>'))
      return RefuseAt(i, "an event trigger (->), which formal does not model");
    return i + 1;
  }

  // The event control after `always`/`always_ff` at i; returns the index after it.
  size_t AlwaysHead(size_t i) {
    const bool ff = Is(i, "always_ff");
    size_t at = i + 1;
    if (!Punct(at, '@')) return RefuseAt(i, "an always block without an event control at its head");
    if (Punct(at + 1, '*')) return at + 2;  // @*
    if (!Punct(at + 1, '(')) return LevelList(i, {at + 1}, at + 2, ff);
    const size_t close = SkipGroup(at + 1);
    if (close == at + 4 && Punct(at + 2, '*')) return close;  // @(*)
    // The list's items, split at `or` and `,` outside brackets.
    std::vector<size_t> level_items;
    bool edges = false;
    auto item_ends = [&](size_t from, size_t to) {
      if (IsAny(from, {"posedge", "negedge", "edge"}))
        edges = true;
      else
        level_items.push_back(to == from + 1 ? from : n_);  // n_: not a plain name
    };
    size_t item = at + 2;
    for (size_t k = at + 2; k + 1 < close;) {
      if (Is(k, "or") || Punct(k, ',')) {
        item_ends(item, k);
        item = ++k;
        continue;
      }
      const size_t next = SkipGroup(k);
      k = next > k ? next : k + 1;
    }
    item_ends(item, close - 1);
    if (edges && !level_items.empty())
      return RefuseAt(i, "an always block sensitive to edges and levels at once");
    if (edges) {
      clocked_.push_back({close, ProceduralEnd(close)});
      return close;
    }
    return LevelList(i, level_items, close, ff);
  }

  // A level-sensitive list (its plain names at `items`; n_ for an item that is not one): the
  // simulator runs the block only when a listed signal changes, Yosys as combinational logic of
  // all it reads. Alike only when the list names every signal the block reads.
  size_t LevelList(size_t always, const std::vector<size_t>& items, size_t body, bool ff) {
    if (ff) return RefuseAt(always, "always_ff without edges");
    Names listed;
    for (size_t k : items)
      if (k < n_ && Word(k)) listed.insert(t_[k].text);
    const size_t end = ProceduralEnd(body);
    const Names assigned = AssignedIn(body, end);
    for (size_t k = body; k < end; ++k) {
      if (!ReadName(k) || listed.count(t_[k].text) || assigned.count(t_[k].text) ||
          constants_.count(t_[k].text))
        continue;
      return RefuseAt(k, "the always block at line " + std::to_string(Line(always)) + " reads `" +
                             std::string(t_[k].text) +
                             "` but is not sensitive to it: the simulator runs it only when a "
                             "listed signal changes, Yosys as combinational logic");
    }
    return body;  // the body is walked like any other statement
  }

  // A name the statement reads: not a keyword, a member (`.x`), a call (`f(`), a cast
  // (`t'(`), an unsized literal (`'x`) or a block label (`begin : x`).
  bool ReadName(size_t k) const {
    if (!Word(k) || Keyword(k)) return false;
    if (k > 0 && (Punct(k - 1, '.') || (Punct(k - 1, '\'') && Adjacent(k - 1)))) return false;
    if (Punct(k + 1, '(') || Punct(k + 1, '\'')) return false;
    if (k >= 2 && Punct(k - 1, ':') && IsAny(k - 2, {"begin", "end", "fork", "join"})) return false;
    return true;
  }

  // Names the statement in [from, to) assigns: `x =`, `x[i] =`, `x.f =`, `x op= `, `x++`,
  // and (unless `blocking_only`) `x <=` where x begins a statement.
  Names AssignedIn(size_t from, size_t to, bool blocking_only = false) const {
    Names out;
    for (size_t k = from; k < to; ++k) {
      if (!Word(k) || Keyword(k)) continue;
      // Selects and members up to a bound (a longer chain simply does not count as assigned).
      size_t j = k + 1;
      for (int hops = 0; hops < 64 && j < to && (Punct(j, '[') || (Punct(j, '.') && Word(j + 1)));
           ++hops)
        j = Punct(j, '[') ? SkipGroup(j) : j + 2;
      const bool plain = Punct(j, '=') && !Punct(j + 1, '=');
      const bool op = j + 1 < to && Adjacent(j) && Punct(j + 1, '=') &&
                      (Punct(j, '+') || Punct(j, '-') || Punct(j, '*') || Punct(j, '/') ||
                       Punct(j, '%') || Punct(j, '&') || Punct(j, '|') || Punct(j, '^'));
      const bool step = Adjacent(j) && ((Punct(j, '+') && Punct(j + 1, '+')) ||
                                        (Punct(j, '-') && Punct(j + 1, '-')));
      const bool nonblocking =
          !blocking_only && Punct(j, '<') && Adjacent(j) && Punct(j + 1, '=') && StartsStatement(k);
      if (plain || op || step || nonblocking) out.insert(t_[k].text);
    }
    return out;
  }

  // A variable a clocked block assigns with `=` and another clocked block reads: which value
  // the reader sees depends on the order the simulator runs the two blocks in at the edge (a
  // race), while Yosys reads the variable as a flip-flop, its old value. A block that assigns
  // the name itself (a shared loop counter) reads its own value.
  void CheckClockedRaces() {
    std::unordered_map<std::string_view, size_t> writer;  // name -> first block writing it
    std::vector<Names> blocking(clocked_.size());
    for (size_t b = 0; b < clocked_.size(); ++b) {
      blocking[b] = AssignedIn(clocked_[b].first, clocked_[b].second, true);
      for (std::string_view name : blocking[b]) writer.emplace(name, b);
    }
    for (size_t b = 0; b < clocked_.size() && finding_.faithful; ++b) {
      for (size_t k = clocked_[b].first; k < clocked_[b].second; ++k) {
        if (!ReadName(k) || blocking[b].count(t_[k].text)) continue;
        auto w = writer.find(t_[k].text);
        if (w == writer.end() || w->second == b) continue;
        RefuseAt(k, "`" + std::string(t_[k].text) +
                        "` is assigned with = in one clocked block and read in another: the "
                        "simulator's order decides what the reader sees, Yosys reads a "
                        "flip-flop");
        break;
      }
    }
  }

  bool StartsStatement(size_t k) const {
    return k == 0 || Punct(k - 1, ';') || Punct(k - 1, ')') || Punct(k - 1, ':') ||
           IsAny(k - 1, {"begin", "end", "else", "endcase"});
  }

  // Parameters, localparams, enum members and genvars: constants, never signals a block
  // must be sensitive to. One forward pass: a declaration ends at its `;` (or at the `)` that
  // closes a module's parameter list), an enum's members at its closing `}`.
  void CollectConstants() {
    enum class In { kNothing, kParameter, kEnumHead, kEnumBody, kGenvar } in = In::kNothing;
    int depth = 0;
    for (size_t i = 0; i < n_; ++i) {
      const bool opens = Opens(i);
      const bool closes = Closes(i);
      if (IsAny(i, {"parameter", "localparam"})) {
        in = In::kParameter, depth = 0;
      } else if (Is(i, "enum")) {
        in = In::kEnumHead, depth = 0;
      } else if (Is(i, "genvar")) {
        in = In::kGenvar, depth = 0;
      } else if (in == In::kNothing) {
        continue;
      } else if (in == In::kEnumHead && Punct(i, '{')) {
        in = In::kEnumBody, depth = 1;
      } else if (opens) {
        ++depth;
      } else if (closes) {
        if (depth == 0 || (--depth == 0 && in == In::kEnumBody)) in = In::kNothing;
      } else if (Punct(i, ';') && depth == 0) {
        in = In::kNothing;
      } else if (Word(i) && !Keyword(i)) {
        const bool named =
            in == In::kParameter  ? depth == 0 && Punct(i + 1, '=') && !Punct(i + 2, '=')
            : in == In::kEnumBody ? depth == 1 && (Punct(i - 1, '{') || Punct(i - 1, ','))
                                  : in == In::kGenvar;
        if (named) constants_.insert(t_[i].text);
      }
    }
  }

  const ProceduralRegions regions_;
  std::vector<size_t> after_group_;  // per opening bracket: the index after its closer
  std::vector<std::pair<size_t, size_t>> clocked_;  // bodies of edge-triggered always blocks
  Names constants_;
  FidelityFinding finding_;
};

}  // namespace

FidelityFinding CheckFormalFidelity(std::string_view compiled) {
  if (compiled.size() > kMaxLexedBytes) return {false, "the design is too large to read"};
  const std::string text = StripAttributes(compiled);
  const std::vector<VerilogToken> tokens = TokenizeVerilog(text);
  return FidelityWalker(tokens).Run();
}

}  // namespace evald
