#include "tests/fuzz/preprocessor_differential.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <vector>

#include "base/file_io.h"
#include "base/py_text.h"
#include "base/subprocess.h"
#include "harness/dropped_bytes.h"
#include "harness/grader.h"
#include "harness/integrity_check.h"
#include "harness/verilog_lexer.h"
#include "tests/fuzz/fuzz_targets.h"

namespace evald::fuzz {

namespace {

// The tokens as the check sees them (comments left out): one "kind text" per line.
std::string TokenView(std::string_view text) {
  std::string view;
  for (const auto& t : TokenizeVerilog(text)) {
    view += std::to_string(static_cast<int>(t.kind)) + (t.escaped ? "\\" : " ");
    view.append(t.text);
    view += '\n';
  }
  return view;
}

std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  size_t line = a.rfind('\n', i == 0 ? 0 : i - 1);
  line = line == std::string::npos ? 0 : line + 1;
  auto upto_eol = [](const std::string& s, size_t from) {
    size_t end = s.find('\n', from);
    return s.substr(from, end == std::string::npos ? std::string::npos : end - from);
  };
  return "'" + upto_eol(a, line) + "' vs '" + upto_eol(b, line) + "'";
}

class Scratch {
 public:
  Scratch() {
    char tmpl[] = "/tmp/evald-ppdiff-XXXXXX";
    if (::mkdtemp(tmpl)) dir_ = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

enum class Tool { kIcarus, kVerilator };

// The tool's preprocessed output of `text`, or nullopt when it refuses it.
std::optional<std::string> Preprocess(Tool tool, std::string_view text, const Scratch& s) {
  const std::string in = s.dir() + "/in.sv", out = s.dir() + "/out.pp";
  ::unlink(out.c_str());
  if (!WriteFileAtomic(in, std::string(text)).ok()) return std::nullopt;
  ProcessOptions o;
  // Far below the fuzz run's 10 s per input (scripts/fuzz_smoke.sh), which covers up to four
  // runs: a macro that expands to itself (a seed in tests/hostile) grows Icarus's preprocessor
  // until it is killed, and at 10 s here that one run raced libFuzzer's alarm. A tool out of time
  // refuses the input, as one that exits with an error does; a real input takes milliseconds.
  o.timeout = std::chrono::milliseconds(2000);
  std::vector<std::string> argv =
      tool == Tool::kIcarus
          ? std::vector<std::string>{"iverilog", "-E", "-g2012", "-o", out, in}
          : std::vector<std::string>{"/bin/sh", "-c",
                                     "exec verilator -E -P " + in + " > " + out + " 2>/dev/null"};
  auto r = RunProcess(argv, o);
  if (!r.ok() || r->exit_code != 0) return std::nullopt;
  auto data = ReadFileBounded(out, 1u << 20);
  if (!data.ok()) return std::nullopt;
  return *data;
}

const char* Name(Tool t) {
  return t == Tool::kIcarus ? "iverilog -E" : "verilator -E -P";
}

}  // namespace

DifferentialResult CompareWithPreprocessors(std::string_view text) {
  DifferentialResult r;
  Scratch scratch;
  if (scratch.dir().empty()) return r;
  const bool has_directives = text.find('`') != std::string_view::npos;
  for (Tool tool : {Tool::kIcarus, Tool::kVerilator}) {
    auto out = Preprocess(tool, text, scratch);
    if (!out) continue;
    const std::string compiled = CompiledText(*out);
    if (!has_directives) {
      // What each tool reads: Icarus ends a line at a lone carriage return, as the compiled text
      // does; Verilator drops carriage returns, and ^Z and byte-order-mark bytes in code, first.
      const std::string as_read =
          tool == Tool::kVerilator ? AsVerilatorReads(text) : py::TranslateNewlines(text);
      const std::string mine = TokenView(StripComments(as_read));
      const std::string theirs = TokenView(compiled);
      if (mine != theirs) {
        r.mismatch = true;
        r.what = std::string("the lexer and ") + Name(tool) +
                 " read the text differently: " + FirstDifference(mine, theirs);
        return r;
      }
    }
    if (CheckCompiledDesign(compiled).violation) continue;
    ++r.accepted;
    const std::string view = TokenView(compiled);
    for (Tool again : {Tool::kIcarus, Tool::kVerilator}) {
      auto second = Preprocess(again, compiled, scratch);
      // Refused (an unterminated string, say): the compiler refuses it too, so it cannot pass.
      if (!second) continue;
      const std::string view2 = TokenView(CompiledText(*second));
      // Verilator reads the accepted text without the bytes it drops in code.
      const std::string expected =
          again == Tool::kVerilator ? TokenView(AsVerilatorReads(compiled)) : view;
      if (view2 != expected) {
        r.mismatch = true;
        r.what = std::string("the text accepted after ") + Name(tool) + " changes under " +
                 Name(again) + ": " + FirstDifference(expected, view2);
        return r;
      }
    }
  }
  return r;
}

std::string RandomPreprocessorText(std::mt19937& rng) {
  static const char* const kFragments[] = {"module",
                                           "TopModule",
                                           "endmodule",
                                           "(",
                                           ")",
                                           ";",
                                           ",",
                                           "input",
                                           "output",
                                           "wire",
                                           "assign",
                                           "=",
                                           "a",
                                           "b",
                                           "out",
                                           "tb",
                                           ".",
                                           "RefModule",
                                           "$display",
                                           "$finish",
                                           "$fopen",
                                           "initial",
                                           "begin",
                                           "end",
                                           "4'b1x0z",
                                           "'hFF",
                                           "8'h FF",
                                           "12",
                                           "1.5",
                                           "'x",
                                           "\"plain\"",
                                           "\"with \\\" quote\"",
                                           "\"a /* b\"",
                                           "\"a // b\"",
                                           "\"back\\\\\"",
                                           "\"tick ` inside\"",
                                           "\"%m\"",
                                           "\"ends\\n\"",
                                           "// line comment",
                                           "// \" quote in comment",
                                           "// /* open in line",
                                           "/* block */",
                                           "/* // inside */",
                                           "/* \" */",
                                           "/* multi\nline */",
                                           "/* * / */",
                                           "\\escaped ",
                                           "\\a/*b ",
                                           "\\$finish ",
                                           "\\x\"y ",
                                           "`define M(x) x",
                                           "`define P(a,b) a``b",
                                           "`define S(x) `\"x`\"",
                                           "`M(1)",
                                           "`P(q,r)",
                                           "`S(hi)",
                                           "`timescale 1ns/1ps",
                                           "`default_nettype none",
                                           "`ifdef FOO",
                                           "`else",
                                           "`endif",
                                           "`undef M",
                                           "`__LINE__",
                                           "`define W 8",
                                           "[`W-1:0]",
                                           "`resetall",
                                           "`define C(x) /* x */",
                                           "\\\n",
                                           "\n",
                                           "\n",
                                           " ",
                                           " ",
                                           "\t",
                                           "\r\n",
                                           "\r",
                                           "\x1a",
                                           "\xef\xbb\xbf",
                                           "\xbb",
                                           "\xe2\x86\x92",
                                           "\f",
                                           "\"",
                                           "/",
                                           "*",
                                           "`",
                                           "\\",
                                           "#",
                                           "@",
                                           "{",
                                           "}",
                                           "[",
                                           "]",
                                           "(*",
                                           "*)",
                                           "::",
                                           "?",
                                           ":"};
  constexpr size_t kCount = sizeof kFragments / sizeof kFragments[0];
  std::uniform_int_distribution<size_t> pick(0, kCount - 1), length(1, 40);
  std::string text;
  const size_t n = length(rng);
  for (size_t i = 0; i < n; ++i) {
    text += kFragments[pick(rng)];
    text += (rng() % 3 == 0) ? "\n" : " ";
  }
  return text;
}

int PreprocessorDifferential(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  std::string_view text = View(data, size);
  if (text.find('\0') != std::string_view::npos) return 0;  // not a source file
  DifferentialResult r = CompareWithPreprocessors(text);
  if (r.mismatch) {
    std::fprintf(stderr, "preprocessor differential: %s\n", r.what.c_str());
    __builtin_trap();
  }
  return 0;
}

}  // namespace evald::fuzz
