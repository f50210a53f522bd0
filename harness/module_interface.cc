#include "harness/module_interface.h"

#include <map>

#include "harness/constant_expression.h"
#include "harness/procedural_regions.h"
#include "harness/verilog_lexer.h"

namespace evald {

namespace {

using Kind = VerilogToken::Kind;
using Direction = PortDeclaration::Direction;
using Tokens = std::vector<VerilogToken>;

bool IsWord(const Tokens& t, size_t i, std::string_view w) {
  return i < t.size() && t[i].kind == Kind::kIdentifier && !t[i].escaped && t[i].text == w;
}
bool IsPunct(const Tokens& t, size_t i, char c) {
  return i < t.size() && t[i].kind == Kind::kPunct && t[i].text[0] == c;
}
bool IsName(const Tokens& t, size_t i) {
  return i < t.size() && t[i].kind == Kind::kIdentifier;
}

// Index after the bracket group opened at i, or t.size() when it never closes.
size_t CloseGroup(const Tokens& t, size_t i, size_t end) {
  int depth = 0;
  for (; i < end; ++i) {
    if (IsPunct(t, i, '(') || IsPunct(t, i, '[') || IsPunct(t, i, '{')) ++depth;
    if (IsPunct(t, i, ')') || IsPunct(t, i, ']') || IsPunct(t, i, '}'))
      if (--depth == 0) return i + 1;
  }
  return t.size();
}

// [begin, end) split at top-level commas.
std::vector<TokenRange> SplitCommas(const Tokens& t, TokenRange r) {
  std::vector<TokenRange> items;
  size_t start = r.begin;
  for (size_t i = r.begin; i < r.end;) {
    if (IsPunct(t, i, '(') || IsPunct(t, i, '[') || IsPunct(t, i, '{')) {
      i = CloseGroup(t, i, r.end);
      continue;
    }
    if (IsPunct(t, i, ',')) {
      items.push_back({start, i});
      start = i + 1;
    }
    ++i;
  }
  if (start < r.end || !items.empty()) items.push_back({start, r.end});
  return items;
}

std::optional<Direction> DirectionWord(const Tokens& t, size_t i) {
  if (IsWord(t, i, "input")) return Direction::kInput;
  if (IsWord(t, i, "output")) return Direction::kOutput;
  if (IsWord(t, i, "inout") || IsWord(t, i, "ref")) return Direction::kInout;
  return std::nullopt;
}

bool NetOrVarWord(const Tokens& t, size_t i) {
  static const char* const kWords[] = {"wire",    "tri",     "tri0",  "tri1",        "wand",
                                       "wor",     "triand",  "trior", "trireg",      "uwire",
                                       "supply0", "supply1", "var",   "interconnect"};
  for (const char* w : kWords)
    if (IsWord(t, i, w)) return true;
  return false;
}

// Bits of a built-in data type keyword; 0 when `i` is none; -1 for a type without a width.
int BuiltinTypeBits(const Tokens& t, size_t i, bool* is_signed) {
  struct Builtin {
    const char* word;
    int bits;
    bool is_signed;
  };
  static const Builtin kTypes[] = {
      {"reg", 1, false},     {"logic", 1, false}, {"bit", 1, false},        {"int", 32, true},
      {"integer", 32, true}, {"byte", 8, true},   {"shortint", 16, true},   {"longint", 64, true},
      {"time", 64, false},   {"real", -1, false}, {"shortreal", -1, false}, {"realtime", -1, false},
      {"string", -1, false}};
  for (const auto& b : kTypes) {
    if (IsWord(t, i, b.word)) {
      *is_signed = b.is_signed;
      return b.bits;
    }
  }
  return 0;
}

// What a declaration says about the type: bits per element and whether it is known.
struct TypeShape {
  std::optional<int64_t> bits;  // before packed dimensions
  bool is_signed = false;
  bool has_type = false;  // a data type or packed dimension was written
};

class InterfaceReader {
 public:
  InterfaceReader(std::string_view text, std::string_view module)
      : t_(TokenizeVerilog(text)), scope_(t_), module_(module) {}

  InterfaceReading Read() {
    InterfaceReading r;
    size_t header = 0;
    int found = 0;
    for (size_t i = 0; i + 1 < t_.size(); ++i) {
      if ((IsWord(t_, i, "module") || IsWord(t_, i, "macromodule")) && IsName(t_, i + 1) &&
          t_[i + 1].text == module_) {
        if (found++ == 0) header = i;
      }
    }
    if (found == 0) return r;
    if (found > 1) {
      r.outcome = InterfaceReading::Outcome::kDefinedTwice;
      r.problem = "module " + module_ + " is defined " + std::to_string(found) + " times";
      return r;
    }
    r.interface.module = module_;
    ReadTypedefs();
    if (!ReadHeader(header, &r.interface) || !problem_.empty()) {
      r.outcome = InterfaceReading::Outcome::kUnreadable;
      r.problem =
          problem_.empty() ? "the port list of " + module_ + " could not be read" : problem_;
      return r;
    }
    r.outcome = InterfaceReading::Outcome::kFound;
    return r;
  }

 private:
  bool Fail(size_t i, const std::string& what) {
    if (problem_.empty())
      problem_ = "line " + std::to_string(i < t_.size() ? t_[i].line : 0) + ": " + what;
    return false;
  }

  // typedef <type> NAME; anywhere in the text: the widths of named types ports may use.
  void ReadTypedefs() {
    for (size_t i = 0; i < t_.size(); ++i) {
      if (!IsWord(t_, i, "typedef")) continue;
      size_t semi = i + 1;
      while (semi < t_.size() && !IsPunct(t_, semi, ';')) {
        size_t next = (IsPunct(t_, semi, '{') || IsPunct(t_, semi, '[') || IsPunct(t_, semi, '('))
                          ? CloseGroup(t_, semi, t_.size())
                          : semi + 1;
        semi = next;
      }
      if (semi >= t_.size() || !IsName(t_, semi - 1)) continue;
      typedefs_[std::string(t_[semi - 1].text)] = {i + 1, semi - 1};
      i = semi;
    }
  }

  std::optional<int64_t> TypedefBits(std::string_view name, int depth) {
    auto it = typedefs_.find(name);
    if (it == typedefs_.end() || depth > 8) return std::nullopt;
    TokenRange r = it->second;
    size_t i = r.begin;
    if (IsWord(t_, i, "enum")) {
      ++i;
      if (IsPunct(t_, i, '{')) return 32;  // enum without a base type: int
      TypeShape s = ReadType(&i, r.end, depth + 1);
      auto dims = ReadPackedDims(&i, r.end);
      if (!s.bits || !dims) return std::nullopt;
      return *s.bits * *dims;
    }
    if (IsWord(t_, i, "struct") || IsWord(t_, i, "union")) return std::nullopt;
    TypeShape s = ReadType(&i, r.end, depth + 1);
    auto dims = ReadPackedDims(&i, r.end);
    if (!s.has_type || !s.bits || !dims || i != r.end) return std::nullopt;
    return *s.bits * *dims;
  }

  // The data type at *i (built-in keyword or typedef name, then signing); *i moves past it.
  TypeShape ReadType(size_t* i, size_t end, int depth) {
    TypeShape s;
    s.bits = 1;
    bool builtin_signed = false;
    int bits = BuiltinTypeBits(t_, *i, &builtin_signed);
    if (bits != 0) {
      s.has_type = true;
      s.is_signed = builtin_signed;
      if (bits < 0)
        s.bits.reset();
      else
        s.bits = bits;
      ++*i;
    } else if (IsName(t_, *i) && !t_[*i].escaped && typedefs_.count(t_[*i].text) && *i + 1 < end &&
               (IsName(t_, *i + 1) || IsPunct(t_, *i + 1, '['))) {
      s.has_type = true;
      s.bits = TypedefBits(t_[*i].text, depth);
      ++*i;
    } else if (IsName(t_, *i) && !t_[*i].escaped && *i + 1 < end &&
               (IsName(t_, *i + 1) || IsPunct(t_, *i + 1, '['))) {
      // A type evald does not know (from a package, an interface ...): its width is unknown.
      // A name followed by '[' is a type only if a name follows the dimensions.
      size_t k = *i + 1;
      while (IsPunct(t_, k, '[')) k = CloseGroup(t_, k, end);
      if (IsName(t_, k)) {
        s.has_type = true;
        s.bits.reset();
        ++*i;
      }
    }
    if (IsWord(t_, *i, "signed")) {
      s.is_signed = true;
      ++*i;
    } else if (IsWord(t_, *i, "unsigned")) {
      s.is_signed = false;
      ++*i;
    }
    return s;
  }

  // Packed dimensions [msb:lsb]... at *i: the product of their widths (1 when there are none).
  std::optional<int64_t> ReadPackedDims(size_t* i, size_t end) {
    std::optional<int64_t> product = 1;
    while (IsPunct(t_, *i, '[')) {
      size_t close = CloseGroup(t_, *i, end);
      if (close > end) return std::nullopt;
      size_t colon = 0;
      int depth = 0;
      for (size_t k = *i + 1; k + 1 < close; ++k) {
        if (IsPunct(t_, k, '(') || IsPunct(t_, k, '[') || IsPunct(t_, k, '{')) ++depth;
        if (IsPunct(t_, k, ')') || IsPunct(t_, k, ']') || IsPunct(t_, k, '}')) --depth;
        if (depth == 0 && IsPunct(t_, k, ':') && !colon) colon = k;
        if (depth == 0 && IsPunct(t_, k, '?')) colon = 0, k = close;  // a ?: range: give up
      }
      std::optional<int64_t> w;
      if (colon) {
        auto msb = scope_.Evaluate({*i + 1, colon});
        auto lsb = scope_.Evaluate({colon + 1, close - 1});
        if (msb && lsb) w = (*msb > *lsb ? *msb - *lsb : *lsb - *msb) + 1;
      }
      if (!w || !product || *w > (int64_t{1} << 24))
        product.reset();
      else
        product = *product * *w;
      *i = close;
    }
    return product;
  }

  // parameter/localparam NAME = expr, ... within [begin, end)
  void DefineParameters(TokenRange r) {
    for (TokenRange item : SplitCommas(t_, r)) {
      size_t eq = item.begin;
      while (eq < item.end && !IsPunct(t_, eq, '=')) ++eq;
      if (eq >= item.end || eq == item.begin || !IsName(t_, eq - 1)) continue;
      scope_.Define(t_[eq - 1].text, {eq + 1, item.end});
    }
  }

  // NAME = VALUE of each header parameter, VALUE as the source writes it.
  void RecordHeaderParameters(TokenRange r, ModuleInterface* out) {
    for (TokenRange item : SplitCommas(t_, r)) {
      size_t eq = item.begin;
      while (eq < item.end && !IsPunct(t_, eq, '=')) ++eq;
      if (eq >= item.end || eq == item.begin || eq + 1 >= item.end || !IsName(t_, eq - 1)) continue;
      const char* begin = t_[eq + 1].text.data();
      const auto& last = t_[item.end - 1].text;
      out->parameters.push_back(
          {std::string(t_[eq - 1].text),
           std::string(begin, static_cast<size_t>(last.data() + last.size() - begin))});
    }
  }

  void ReadBodyParameters(size_t body, size_t end, const ProceduralRegions& regions) {
    for (size_t i = body; i < end; ++i) {
      if (regions.procedural[i]) continue;
      if (!IsWord(t_, i, "parameter") && !IsWord(t_, i, "localparam")) continue;
      size_t semi = i + 1;
      while (semi < end && !IsPunct(t_, semi, ';')) ++semi;
      DefineParameters({i + 1, semi});
      i = semi;
    }
  }

  bool ReadHeader(size_t header, ModuleInterface* out) {
    size_t i = header + 2;
    while (IsWord(t_, i, "automatic") || IsWord(t_, i, "static")) ++i;
    while (IsWord(t_, i, "import")) {
      while (i < t_.size() && !IsPunct(t_, i, ';')) ++i;
      ++i;
    }
    if (IsPunct(t_, i, '#')) {
      if (!IsPunct(t_, i + 1, '(')) return Fail(i, "a parameter list without parentheses");
      size_t close = CloseGroup(t_, i + 1, t_.size());
      if (close > t_.size() - 0 || close == t_.size()) return Fail(i, "an unclosed parameter list");
      DefineParameters({i + 2, close - 1});
      RecordHeaderParameters({i + 2, close - 1}, out);
      i = close;
    }
    TokenRange ports{0, 0};
    if (IsPunct(t_, i, '(')) {
      size_t close = CloseGroup(t_, i, t_.size());
      if (close >= t_.size()) return Fail(i, "an unclosed port list");
      ports = {i + 1, close - 1};
      i = close;
    }
    if (!IsPunct(t_, i, ';')) return Fail(i, "no ';' after the port list");
    const size_t body = i + 1;
    size_t end = body;
    while (end < t_.size() && !IsWord(t_, end, "endmodule")) ++end;
    const ProceduralRegions regions = FindProceduralRegions(t_);
    ReadBodyParameters(body, end, regions);
    if (ports.begin == ports.end) return true;
    std::vector<TokenRange> items = SplitCommas(t_, ports);
    if (items.empty()) return true;
    size_t first = items[0].begin;
    while (IsPunct(t_, first, '(') && IsPunct(t_, first + 1, '*')) first = SkipAttribute(first);
    const bool ansi = DirectionWord(t_, first).has_value();
    return ansi ? ReadAnsiPorts(items, out) : ReadListedPorts(items, body, end, regions, out);
  }

  size_t SkipAttribute(size_t i) {
    // (* ... *)
    for (size_t k = i + 2; k + 1 < t_.size(); ++k)
      if (IsPunct(t_, k, '*') && IsPunct(t_, k + 1, ')')) return k + 2;
    return t_.size();
  }

  // One declaration after its direction: [net/var kind] [type] [signing] [packed dims].
  struct DeclaredShape {
    TypeShape type;
    std::optional<int64_t> dims = 1;
    bool written = false;  // anything at all was written besides the name
  };
  DeclaredShape ReadShape(size_t* i, size_t end) {
    DeclaredShape d;
    while (NetOrVarWord(t_, *i)) {
      ++*i;
      d.written = true;
    }
    d.type = ReadType(i, end, 0);
    if (d.type.has_type || d.type.is_signed) d.written = true;
    if (IsPunct(t_, *i, '[')) d.written = true;
    d.dims = ReadPackedDims(i, end);
    return d;
  }

  static std::optional<int64_t> Width(const DeclaredShape& d) {
    if (!d.type.bits || !d.dims) return std::nullopt;
    return *d.type.bits * *d.dims;
  }

  bool ReadAnsiPorts(const std::vector<TokenRange>& items, ModuleInterface* out) {
    PortDeclaration previous;
    bool have_previous = false;
    for (TokenRange item : items) {
      size_t i = item.begin;
      while (IsPunct(t_, i, '(') && IsPunct(t_, i + 1, '*')) i = SkipAttribute(i);
      PortDeclaration p;
      auto dir = DirectionWord(t_, i);
      if (dir) ++i;
      DeclaredShape shape = ReadShape(&i, item.end);
      if (!dir && !have_previous) return Fail(item.begin, "a port without a direction");
      if (!dir && !shape.written) {
        p = previous;  // direction, kind and type all omitted: inherited
      } else {
        p.direction = dir ? *dir : previous.direction;
        p.width = Width(shape);
        p.is_signed = shape.type.is_signed;
      }
      if (!IsName(t_, i)) return Fail(i, "a port without a name");
      p.name = std::string(t_[i].text);
      p.line = t_[i].line;
      ++i;
      p.unpacked = IsPunct(t_, i, '[');
      if (p.unpacked) p.width.reset();
      if (p.unpacked) i = CloseGroup(t_, i, item.end);
      while (IsPunct(t_, i, '[')) i = CloseGroup(t_, i, item.end);
      if (i < item.end && !IsPunct(t_, i, '='))
        return Fail(i, "unexpected text in the declaration of port " + p.name);
      out->ports.push_back(p);
      previous = p;
      have_previous = true;
    }
    return true;
  }

  // module m(a, b); input a; output [3:0] b; ...
  bool ReadListedPorts(const std::vector<TokenRange>& items, size_t body, size_t end,
                       const ProceduralRegions& regions, ModuleInterface* out) {
    std::map<std::string, PortDeclaration, std::less<>> declared;
    std::map<std::string, std::optional<int64_t>, std::less<>> data_widths;
    for (size_t i = body; i < end; ++i) {
      if (regions.procedural[i]) continue;
      auto dir = DirectionWord(t_, i);
      const bool data =
          !dir && (NetOrVarWord(t_, i) || IsWord(t_, i, "reg") || IsWord(t_, i, "logic") ||
                   IsWord(t_, i, "bit") || IsWord(t_, i, "integer"));
      if (!dir && !data) continue;
      size_t semi = i;
      while (semi < end && !IsPunct(t_, semi, ';')) ++semi;
      size_t k = dir ? i + 1 : i;
      DeclaredShape shape = ReadShape(&k, semi);
      for (TokenRange name : SplitCommas(t_, {k, semi})) {
        if (!IsName(t_, name.begin)) continue;
        const std::string n(t_[name.begin].text);
        if (dir) {
          PortDeclaration p;
          p.name = n;
          p.direction = *dir;
          p.width = Width(shape);
          p.is_signed = shape.type.is_signed;
          p.line = t_[name.begin].line;
          p.unpacked = IsPunct(t_, name.begin + 1, '[');
          if (p.unpacked) p.width.reset();
          // A direction declaration that gives no type or range leaves them to a data
          // declaration of the same name (output q; reg [3:0] q;).
          if (!shape.written) p.width.reset();
          declared[n] = p;
        } else {
          data_widths[n] = Width(shape);
        }
      }
      i = semi;
    }
    for (TokenRange item : items) {
      if (item.end != item.begin + 1 || !IsName(t_, item.begin))
        return Fail(item.begin, "a port list entry that is not a plain name");
      const std::string n(t_[item.begin].text);
      auto it = declared.find(n);
      if (it == declared.end()) return Fail(item.begin, "port " + n + " has no direction");
      PortDeclaration p = it->second;
      if (!p.width && !p.unpacked) {
        auto data = data_widths.find(n);
        p.width = data != data_widths.end() ? data->second : std::optional<int64_t>(1);
      }
      out->ports.push_back(p);
    }
    return true;
  }

  Tokens t_;
  ConstantScope scope_;
  std::string module_;
  std::map<std::string, TokenRange, std::less<>> typedefs_;
  std::string problem_;
};

}  // namespace

std::string_view DirectionName(Direction d) {
  switch (d) {
    case Direction::kInput:
      return "input";
    case Direction::kOutput:
      return "output";
    case Direction::kInout:
      return "inout";
  }
  return "?";
}

const PortDeclaration* ModuleInterface::Find(std::string_view name) const {
  for (const auto& p : ports)
    if (p.name == name) return &p;
  return nullptr;
}

InterfaceReading ReadModuleInterface(std::string_view text, std::string_view module) {
  return InterfaceReader(text, module).Read();
}

std::string InterfaceDifference(const ModuleInterface& reference, const ModuleInterface& design) {
  for (const auto& r : reference.ports) {
    const PortDeclaration* d = design.Find(r.name);
    const std::string port = "port `" + r.name + "`";
    if (!d) continue;  // a missing port cannot be connected: the compiler says so
    if (d->direction != r.direction)
      return port + " is declared " + std::string(DirectionName(d->direction)) +
             "; the reference's is " + std::string(DirectionName(r.direction));
    if (d->unpacked != r.unpacked)
      return port + (d->unpacked ? " is an array; the reference's is not"
                                 : " is not an array; the reference's is");
    if (d->width && r.width && *d->width != *r.width)
      return port + " is " + std::to_string(*d->width) + " bits wide; the reference's is " +
             std::to_string(*r.width);
  }
  for (const auto& d : design.ports)
    if (!reference.Find(d.name)) return "port `" + d.name + "` is not a port of the reference";
  return "";
}

}  // namespace evald
