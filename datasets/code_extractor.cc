#include "datasets/code_extractor.h"

#include "base/py_text.h"

namespace evald {

namespace {

using py::LStrip;
using py::RStrip;
using py::StartsWith;
using py::Strip;

struct FirstPass {
  int backticks = 0;
  bool module_already_exists = false;
};

// sv-generate's first pass: count fence lines and decide whether the response declares
// `module TopModule` itself (an `endmodule` seen before any module line cancels that).
FirstPass ScanResponse(const std::vector<std::string_view>& lines) {
  FirstPass r;
  bool endmodule_before_module = false;
  for (auto line : lines) {
    if (StartsWith(line, "```")) {
      ++r.backticks;
    } else if (StartsWith(line, "endmodule")) {
      if (!r.module_already_exists) endmodule_before_module = true;
    } else if (StartsWith(line, "module TopModule")) {
      r.module_already_exists = true;
    }
  }
  if (endmodule_before_module) r.module_already_exists = false;
  return r;
}

struct EchoResult {
  bool found_module = false;
  bool found_endmodule = false;
};

// sv-generate's second pass: with two or more fence lines, the lines inside the first fenced
// block; otherwise everything up to and including the first `endmodule` line (skipping what
// comes before `module TopModule` when the response declares it).
EchoResult EchoCode(const std::vector<std::string_view>& lines, const FirstPass& first,
                    std::string* out) {
  EchoResult r;
  bool first_fence = false, second_fence = false;
  for (auto line : lines) {
    bool echo = true;
    if (StartsWith(Strip(line), "module TopModule")) r.found_module = true;
    if (first.backticks >= 2) {
      if (!first_fence || second_fence) echo = false;
    } else {
      if (r.found_endmodule) echo = false;
      if (first.module_already_exists && !r.found_module) echo = false;
    }
    if (StartsWith(line, "```")) {
      if (!first_fence) {
        first_fence = true;
      } else {
        second_fence = true;
      }
      echo = false;
    } else if (StartsWith(Strip(line), "endmodule")) {
      r.found_endmodule = true;
    }
    if (echo) {
      out->append(line);
      out->push_back('\n');
    }
  }
  return r;
}

std::string FallbackMethod(const FirstPass& first, const EchoResult& echo) {
  if (first.backticks >= 2) return "fence";
  if (echo.found_endmodule) return "endmodule";
  return "whole";
}

// The lines between a [BEGIN] line and a [DONE] line, as verilog-eval reads them (the markers
// also accepted at the start / end of a line). `begun` says whether a [BEGIN] was seen, `done`
// whether a [DONE] closed it.
struct Marked {
  std::vector<std::string> lines;
  bool begun = false, done = false;
};

Marked MarkedLines(const std::vector<std::string_view>& lines) {
  Marked m;
  for (auto line : lines) {
    if (!m.begun) {
      if (Strip(line) == "[BEGIN]") {
        m.begun = true;
      } else if (StartsWith(LStrip(line), "[BEGIN]")) {
        m.lines.push_back(py::ReplaceAll(LStrip(line), "[BEGIN]", ""));
        m.begun = true;
      }
    } else if (!m.done) {
      if (Strip(line) == "[DONE]") {
        m.done = true;
      } else if (py::EndsWith(RStrip(line), "[DONE]")) {
        m.lines.push_back(py::ReplaceAll(RStrip(line), "[DONE]", ""));
        m.done = true;
      } else {
        m.lines.emplace_back(line);
      }
    }
  }
  return m;
}

struct Fenced {
  std::string code;  // the fenced blocks that declare a module, in order
  bool any_fence = false;
};

Fenced FencedModules(const std::vector<std::string_view>& lines) {
  Fenced f;
  std::string block;
  bool inside = false, has_module = false;
  for (auto line : lines) {
    if (StartsWith(LStrip(line), "```")) {
      f.any_fence = true;
      if (inside && has_module) f.code += block;
      inside = !inside;
      block.clear();
      has_module = false;
      continue;
    }
    if (!inside) continue;
    if (StartsWith(LStrip(line), "module")) has_module = true;
    block.append(line);
    block.push_back('\n');
  }
  return f;
}

// RTLLM publishes no extraction rule (its harness compiles the files a user writes). The
// common practice: the fenced blocks that declare a module, joined in order (a response that
// splits a design and its submodules over several blocks keeps them all); without fences, the
// whole response. A response to the question-answer prompt style answers between [BEGIN] and
// [DONE]: then only what they enclose is read, by the same rule.
ExtractedCode ExtractRtllmCode(std::string_view response) {
  ExtractedCode r;
  auto lines = py::SplitLines(response);
  std::string marked_text;
  const Marked marked = MarkedLines(lines);
  const bool markers = marked.begun && marked.done;
  if (markers) {
    for (const auto& l : marked.lines) marked_text += l + "\n";
    lines = py::SplitLines(marked_text);
    response = marked_text;
  } else if (marked.begun) {
    r.notes.push_back("[BEGIN] without [DONE]: read as a response without markers");
  }
  Fenced fenced = FencedModules(lines);
  if (fenced.any_fence && !fenced.code.empty()) {
    r.method = markers ? "markers" : "fence";
    r.code = std::move(fenced.code);
  } else {
    r.method = markers ? "markers" : "whole";
    r.code = std::string(response);
    if (fenced.any_fence) r.notes.push_back("no fenced block declares a module");
  }
  return r;
}

}  // namespace

ExtractedCode ExtractCode(Task task, std::string_view response, std::string_view interface) {
  ExtractedCode r;
  if (IsVerilogEvalV1(task)) {
    // VerilogEval v1's harness compiles prompt + "\n" + completion, the completion verbatim.
    r.code = std::string(interface) + "\n" + std::string(response);
    r.method = "appended";
    r.interface_prepended = true;
    return r;
  }
  if (task == Task::kRtllm2) return ExtractRtllmCode(response);
  const auto lines = py::SplitLines(response);
  const FirstPass first = ScanResponse(lines);
  std::string& out = r.code;
  out = "\n";

  if (task == Task::kCodeComplete) {
    if (!first.module_already_exists) {
      out.append(interface);
      out += "\n\n";
      r.interface_prepended = true;
    }
    EchoResult echo = EchoCode(lines, first, &out);
    r.method = FallbackMethod(first, echo);
    out += "\n";
    if (first.backticks == 1 || first.backticks > 2) {
      out += "// VERILOG-EVAL: abnormal backticks count\n\n";
      r.notes.push_back("abnormal backticks count");
    }
    if (echo.found_module) {
      out += "// VERILOG-EVAL: errant inclusion of module definition\n\n";
      r.notes.push_back("errant inclusion of module definition");
    }
    if (!echo.found_endmodule) {
      out += "// VERILOG-EVAL: endmodule not found\n\n";
      r.notes.push_back("endmodule not found");
    }
  } else {
    // [BEGIN] ... [DONE], also accepted at the start / end of a line.
    const Marked marked = MarkedLines(lines);
    if (marked.begun && marked.done) {
      r.method = "markers";
      for (const auto& l : marked.lines) out += l + "\n";
    } else if (marked.begun) {
      // The benchmark writes nothing at all when [BEGIN] is never closed.
      r.method = "markers_unterminated";
      r.notes.push_back("[BEGIN] without [DONE]: the benchmark extracts nothing");
    } else {
      EchoResult echo = EchoCode(lines, first, &out);
      r.method = FallbackMethod(first, echo);
      out += "\n";
      out += "// VERILOG-EVAL: response did not use <CODE></CODE> correctly\n";
      r.notes.push_back("response did not use [BEGIN]/[DONE]");
    }
  }
  out += "\n";
  return r;
}

}  // namespace evald
