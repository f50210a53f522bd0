// Runs every fuzz entry point over seeded random inputs and mutations of realistic seeds, so
// that the parsers see hostile bytes in every CI run (and under the sanitizers there).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "test_support.h"
#include "tests/fuzz/fuzz_targets.h"

namespace evald {
namespace {

using Target = int (*)(const uint8_t*, size_t);

// A GGUF v3 file: one metadata string and one F32 tensor of 8 elements.
std::string GgufSeed() {
  std::string s("GGUF", 4);
  auto u32 = [&](uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); };
  auto u64 = [&](uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); };
  auto str = [&](const std::string& v) {
    u64(v.size());
    s += v;
  };
  u32(3);
  u64(1);  // tensors
  u64(1);  // metadata
  str("general.architecture");
  u32(8);
  str("llama");
  str("t");
  u32(1);
  u64(8);
  u32(0);
  u64(0);
  s.resize((s.size() + 31) / 32 * 32, '\0');
  s.append(32, '\0');
  return s;
}

const std::vector<std::string> kSeeds = {
    "12 0 RUNNING None\n12 3 PENDING Resources\nN/A N/A RUNNING None\n7 1 2\n",
    "     1 \\in_a   1   1   0001\n     1 \\gold_out  --  --  x1x0\n     1 \\gate_out 3 3 "
    "0011\n   Number of cells:   5\n     $_AND_  2\nLongest (length=7)\n",
    "data: {\"choices\":[{\"index\":0,\"text\":\"mod\",\"finish_reason\":null}]}\n\n"
    "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"\\u00e9\"}}],"
    "\"usage\":{\"prompt_tokens\":3}}\r\n\r\n: ping\ndata: [DONE]\n\n",
    "[BEGIN]\nmodule TopModule(input a, output b);\n assign b = a;\nendmodule\n[DONE]\n",
    "```verilog\nmodule TopModule();\nendmodule\n```\ntext ``` more\n```\n",
    "{\"problem\": \"Prob001_zero\", \"completion\": \"[BEGIN]x[DONE]\", \"index\": "
    "3}\n{\"code\":1}\n",
    "module tb(); stats stats1; RefModule good1(); final $display(\"Mismatches: %1d in %1d "
    "samples\", "
    "1, 2); initial begin #1000000 $display(\"TIMEOUT\"); end endmodule\n`ifdef X\n\\esc .tb.x",
    "syntax error\nerror: Unknown module type\nMismatches: 0 in 12 samples\r\nTIMEOUT\n",
    std::string("\x08\x00\x00\x00\x0a\x06\x12\x04\x08\x01\x10\x02", 12),
    std::string("\xff\xff\xff\xff", 4),
    GgufSeed(),
};

std::string Mutate(std::string s, std::mt19937_64& rng) {
  int edits = 1 + static_cast<int>(rng() % 8);
  for (int e = 0; e < edits; ++e) {
    size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 5) {
      case 0:
        if (!s.empty() && pos < s.size()) s[pos] = static_cast<char>(rng());
        break;
      case 1:
        s.insert(pos, 1, static_cast<char>(rng()));
        break;
      case 2:
        if (!s.empty() && pos < s.size()) s.erase(pos, 1 + rng() % 16);
        break;
      case 3: {
        const char* tokens[] = {"[BEGIN]",
                                "[DONE]",
                                "```",
                                "\n",
                                "\r",
                                "module TopModule",
                                "endmodule",
                                "\"",
                                "\\",
                                "{",
                                "}",
                                "`include",
                                "/*",
                                "//",
                                "\xe2\x80\xa8",
                                "\xc2\x85",
                                "Mismatches: 0 in 5 samples"};
        s.insert(pos, tokens[rng() % (sizeof tokens / sizeof *tokens)]);
        break;
      }
      default:
        s += s.substr(0, rng() % (s.size() + 1));
        break;
    }
  }
  return s;
}

void RunTarget(Target target, int iterations) {
  std::mt19937_64 rng(12345);
  for (const auto& seed : kSeeds)
    target(reinterpret_cast<const uint8_t*>(seed.data()), seed.size());
  for (int i = 0; i < iterations; ++i) {
    std::string input;
    if (i % 4 == 0) {
      input.resize(rng() % 512);
      for (char& c : input) c = static_cast<char>(rng());
    } else {
      input = Mutate(kSeeds[rng() % kSeeds.size()], rng);
    }
    target(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  }
}

TEST(FuzzSmoke, Extraction) {
  RunTarget(fuzz::ExtractAndClassify, 3000);
}
TEST(FuzzSmoke, SamplesReader) {
  RunTarget(fuzz::ParseSamples, 3000);
}
TEST(FuzzSmoke, Integrity) {
  RunTarget(fuzz::CheckIntegrity, 3000);
}
TEST(FuzzSmoke, Lexer) {
  RunTarget(fuzz::LexVerilog, 3000);
}
TEST(FuzzSmoke, SimulatorOutput) {
  RunTarget(fuzz::ClassifyOutput, 3000);
}
TEST(FuzzSmoke, YosysOutput) {
  RunTarget(fuzz::ParseYosysOutput, 3000);
}
TEST(FuzzSmoke, GgufFiles) {
  RunTarget(fuzz::ParseGguf, 3000);
}
TEST(FuzzSmoke, ServerStreams) {
  RunTarget(fuzz::ParseServerStream, 3000);
}
TEST(FuzzSmoke, SpoolFilesAndSqueueOutput) {
  RunTarget(fuzz::ParseSpoolFiles, 3000);
}
TEST(FuzzSmoke, ChatTemplates) {
  RunTarget(fuzz::ParseChatTemplate, 3000);
}
// The template engine on real templates (tests/data/chat_templates) cut and spliced with
// Jinja's own syntax, and on random bytes.
TEST(FuzzSmoke, ChatTemplatesRendered) {
  std::vector<std::string> seeds;
  for (const auto& e :
       std::filesystem::directory_iterator(testing::SourceDir() + "/tests/data/chat_templates")) {
    auto text = ReadFileBounded(e.path().string());
    if (text.ok() && e.path().extension() == ".jinja") seeds.push_back(*text);
  }
  ASSERT_FALSE(seeds.empty());
  const char* syntax[] = {"{%",
                          "%}",
                          "{{",
                          "}}",
                          "{#",
                          "#}",
                          "-",
                          "(",
                          ")",
                          "[",
                          "]",
                          "|",
                          "~",
                          "'",
                          "\\",
                          " if ",
                          " else ",
                          "{% for x in messages %}",
                          "{% endfor %}",
                          "{% endif %}",
                          "loop.",
                          "namespace(",
                          "{% macro m(a) %}{{ m(a) }}",
                          "{% set ns.x = ns %}",
                          "| tojson",
                          "[::-1]",
                          " ** ",
                          "\xe2\x80\xa8"};
  std::mt19937_64 rng(777);
  for (const auto& seed : seeds)
    fuzz::RenderChatTemplate(reinterpret_cast<const uint8_t*>(seed.data()), seed.size());
  for (int i = 0; i < 1500; ++i) {
    std::string input = seeds[rng() % seeds.size()];
    for (int e = 1 + static_cast<int>(rng() % 6); e > 0; --e) {
      size_t pos = rng() % (input.size() + 1);
      if (rng() % 2)
        input.insert(pos, syntax[rng() % (sizeof syntax / sizeof *syntax)]);
      else
        input.erase(pos, rng() % 24);
    }
    fuzz::RenderChatTemplate(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  }
}

TEST(FuzzSmoke, SandboxFrames) {
  RunTarget(fuzz::ReadSandboxFrame, 1000);
}

}  // namespace
}  // namespace evald
