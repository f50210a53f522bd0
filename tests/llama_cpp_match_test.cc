// The decoding core against llama.cpp itself (node-llama-cpp's prebuilt CPU build, installed by
// scripts/install-deps.sh into .cache/node-llama-cpp): identical token ids on a set of strings
// and identical greedy continuations for the F32 and Q8_0 stories260K files.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include <cstdio>

#include "base/file_io.h"
#include "kernels/generate/generator.h"
#include "kernels/gguf/random_model.h"
#include "kernels/tokenizer/spm_tokenizer.h"
#include "kernels/tokenizer/tokenizer.h"
#include "test_support.h"

namespace evald::kernels {
namespace {

std::string NodeModules() {
  return testing::SourceDir() + "/.cache/node-llama-cpp/node_modules";
}
std::string Models() {
  return std::string(EVALD_SHARED_DIR) + "/models";
}

// Runs the reference script; returns its JSON output parsed.
bool Reference(const std::string& model, const std::string& request, google::protobuf::Value* out) {
  std::string quoted = request;
  for (size_t at = 0; (at = quoted.find('\'', at)) != std::string::npos; at += 4)
    quoted.replace(at, 1, "'\\''");
  // ES modules resolve packages from the script's own directory upwards (NODE_PATH does not
  // apply): run a copy of the script placed beside the installed package, named for this
  // process (CTest runs these tests side by side; two copies to one name raced).
  std::string script_dir = testing::SourceDir() + "/.cache/node-llama-cpp";
  std::string script = "llama_cpp_reference." + std::to_string(::getpid()) + ".mjs";
  std::string cmd = "cp " + testing::SourceDir() + "/tests/reference/llama_cpp_reference.mjs " +
                    script_dir + "/" + script + " && cd " + script_dir + " && node " + script +
                    " '" + model + "' '" + quoted + "' 2>/dev/null; rm -f " + script_dir + "/" +
                    script;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return false;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  ::pclose(p);
  return google::protobuf::util::JsonStringToMessage(text, out).ok();
}

std::vector<int> Ids(const google::protobuf::Value& list) {
  std::vector<int> out;
  for (const auto& v : list.list_value().values())
    out.push_back(static_cast<int>(v.number_value()));
  return out;
}

class LlamaCppMatch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!IsDirectory(NodeModules() + "/node-llama-cpp"))
      GTEST_SKIP()
          << "node-llama-cpp is not installed in .cache/node-llama-cpp (scripts/install-deps.sh)";
    if (!IsRegularFile(Models() + "/stories260K-f32.gguf")) GTEST_SKIP() << "no ../shared/models";
  }
};

const std::vector<std::string>& TokenizerStrings() {
  static const std::vector<std::string> strings = {
      "Hello world",
      "module TopModule (\n  input clk,\n  input [7:0] in_,\n  output logic [7:0] out\n);",
      "always @(posedge clk) begin\n    if (reset) q <= 8'd0;\n    else q <= q + 1'b1;\nend",
      "   leading and    inner     spaces\n\n\n\ttabs\t\tand newlines  ",
      "digits 0 12 345 6789 1234567890 3.14159",
      "Unicode: h\xc3\xa9llo w\xc3\xb6rld \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x99\x82 "
      "\xce\xbb \xe2\x80\x94",
      "[BEGIN]\n```verilog\n// comment\n```\n[DONE]",
      "don't I'LL we've they'd SHE'S",
      "a+=b;//c\r\n\r\n  x<=y>>>2; $display(\"%d\", n);",
      "end   \n   \n",
  };
  return strings;
}

std::string TokenizeRequest(const std::vector<std::string>& strings) {
  std::string request = "{\"tokenize\": [";
  for (size_t i = 0; i < strings.size(); ++i) {
    std::string json;
    google::protobuf::Value v;
    v.set_string_value(strings[i]);
    (void)google::protobuf::util::MessageToJsonString(v, &json);
    request += (i ? "," : "") + json;
  }
  return request + "]}";
}

TEST_F(LlamaCppMatch, TokenizerIdsOnVerilogUnicodeWhitespaceAndDigits) {
  const std::vector<std::string>& strings = TokenizerStrings();
  std::string request = TokenizeRequest(strings);
  google::protobuf::Value ref;
  ASSERT_TRUE(Reference(Models() + "/llama-2-tiny-random.gguf", request, &ref))
      << "reference script failed";
  auto file = GgufFile::Open(Models() + "/llama-2-tiny-random.gguf");
  ASSERT_TRUE(file.ok());
  auto tok = SpmTokenizer::FromGguf(**file);
  ASSERT_TRUE(tok.ok());
  const auto& lists = ref.struct_value().fields().at("tokenize").list_value().values();
  ASSERT_EQ(lists.size(), strings.size());
  for (size_t i = 0; i < strings.size(); ++i)
    EXPECT_EQ(tok->Encode(strings[i], false), Ids(lists[static_cast<int>(i)])) << strings[i];
}

TEST_F(LlamaCppMatch, GreedyContinuationsOfF32AndQ8_0) {
  for (const char* file : {"f32", "q8_0"}) {
    std::string path = Models() + "/stories260K-" + file + ".gguf";
    google::protobuf::Value ref;
    ASSERT_TRUE(
        Reference(path, "{\"greedy\": {\"prompt\": \"Once upon a time\", \"tokens\": 60}}", &ref));
    const auto& greedy = ref.struct_value().fields().at("greedy").struct_value().fields();
    auto model = LlamaModel::Load(path);
    ASSERT_TRUE(model.ok());
    auto tok = SpmTokenizer::FromGguf((*model)->file());
    ASSERT_TRUE(tok.ok());
    EXPECT_EQ(tok->Encode("Once upon a time", true), Ids(greedy.at("prompt")));
    GenerateOptions o;
    o.max_tokens = 60;
    auto out = Generate(**model, *tok, "Once upon a time", o, DetectIsa());
    ASSERT_TRUE(out.ok());
    EXPECT_EQ((*out)[0].tokens, Ids(greedy.at("generated"))) << file;
  }
}

// A small random-weight model of `arch`. gemma's head size exceeds dim / heads; gemma2 and
// gemma3 get small windows and caps, so that 5 prompt + 24 generated positions exercise the
// sliding-window mask and the soft-capping (gemma3: layers 0-4 slide, layer 5 is global).
RandomModelShape SmallShape(const std::string& arch, GgmlType type) {
  RandomModelShape shape;
  shape.architecture = arch;
  shape.dim = 128;
  shape.heads = 4;
  shape.kv_heads = 2;
  shape.hidden = 256;
  shape.layers = 2;
  shape.weight_type = type;
  shape.scale = 0.15f;
  if (arch.rfind("gemma", 0) == 0) shape.head_dim = 64;
  if (arch == "gemma2") {
    shape.sliding_window = 6;
    shape.attn_softcap = 1.5f;
    shape.final_softcap = 3.0f;
  }
  if (arch == "gemma3") {
    shape.sliding_window = 5;
    shape.layers = 6;
  }
  return shape;
}

// Random-weight files of each architecture, written by evald, decoded greedily by both.
TEST_F(LlamaCppMatch, RandomLlamaQwen2AndGemmaFiles) {
  for (const char* arch : {"llama", "qwen2", "gemma", "gemma2", "gemma3"}) {
    for (GgmlType type : {GgmlType::kF32, GgmlType::kQ8_0}) {
      RandomModelShape shape = SmallShape(arch, type);
      std::string path = "/tmp/evald-random-" + std::string(arch) + "-" +
                         std::to_string(static_cast<int>(type)) + ".gguf";
      ASSERT_TRUE(WriteRandomModel(shape, Models() + "/stories260K-f32.gguf", path).ok());
      google::protobuf::Value ref;
      ASSERT_TRUE(
          Reference(path, "{\"greedy\": {\"prompt\": \"Once upon a time\", \"tokens\": 24}}", &ref))
          << arch << ": llama.cpp could not run the file";
      const auto& greedy = ref.struct_value().fields().at("greedy").struct_value().fields();
      auto model = LlamaModel::Load(path);
      ASSERT_TRUE(model.ok()) << model.status().ToString();
      auto tok = SpmTokenizer::FromGguf((*model)->file());
      ASSERT_TRUE(tok.ok());
      GenerateOptions o;
      o.max_tokens = 24;
      auto out = Generate(**model, *tok, "Once upon a time", o, DetectIsa());
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      std::vector<int> want = Ids(greedy.at("generated")), got = (*out)[0].tokens;
      if (type != GgmlType::kF32) {
        // Random weights make near-ties in the logits; with 8-bit activations a last-bit
        // difference in the float sums (llama.cpp adds its blocks in another order) can flip one
        // after a while. The first 16 tokens must agree; with F32 weights all of them.
        want.resize(std::min<size_t>(want.size(), 16));
        got.resize(std::min<size_t>(got.size(), 16));
      }
      EXPECT_EQ(got, want) << arch << " type " << static_cast<int>(type);
      std::remove(path.c_str());
    }
  }
}

// Next-token distributions along a sequence (the prompt and evald's greedy continuation):
// evald's softmax(logits) against llama.cpp's at every position. The worst gap in log
// probability over the tokens llama.cpp gives p > 1e-4, and the worst absolute probability gap.
struct Gap {
  double log_p = 0, p = 0;
  double median_log_p = 0;  // the median over positions of each position's worst gap
};

Gap CompareDistributions(const std::string& path, int continuation) {
  auto model = LlamaModel::Load(path);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return {1e9, 1e9};
  auto tok = SpmTokenizer::FromGguf((*model)->file());
  GenerateOptions o;
  o.max_tokens = continuation;
  auto out = Generate(**model, *tok, "Once upon a time", o, DetectIsa());
  EXPECT_TRUE(out.ok());
  std::vector<int> seq = tok->Encode("Once upon a time", true);
  seq.insert(seq.end(), (*out)[0].tokens.begin(), (*out)[0].tokens.end());
  std::string ids;
  for (int t : seq) ids += (ids.empty() ? "" : ",") + std::to_string(t);
  google::protobuf::Value ref;
  EXPECT_TRUE(Reference(path, "{\"probs\": {\"tokens\": [" + ids + "]}}", &ref));
  const auto& probs = ref.struct_value().fields().at("probs").list_value();
  EXPECT_EQ(probs.values_size(), static_cast<int>(seq.size()));
  LlamaSession session(**model, static_cast<int>(seq.size()), DetectIsa());
  const int vocab = (*model)->config().vocab;
  Gap worst;
  std::vector<double> gaps;
  for (size_t pos = 0; pos < seq.size() && static_cast<int>(pos) < probs.values_size(); ++pos) {
    auto logits = session.Forward(seq[pos], static_cast<int>(pos));
    EXPECT_TRUE(logits.ok());
    if (!logits.ok()) break;
    const float* l = *logits;
    double max = -1e30, sum = 0;
    for (int v = 0; v < vocab; ++v) max = std::max<double>(max, l[v]);
    for (int v = 0; v < vocab; ++v) sum += std::exp(l[v] - max);
    const auto& want = probs.values(static_cast<int>(pos)).list_value();
    EXPECT_EQ(want.values_size(), vocab);
    double pos_gap = 0;
    for (int v = 0; v < vocab && v < want.values_size(); ++v) {
      const double log_p = l[v] - max - std::log(sum);
      const double r = want.values(v).number_value();
      if (r > 1e-4) pos_gap = std::max(pos_gap, std::abs(log_p - std::log(r)));
      const double ref_p = want.values(v).number_value();
      worst.p = std::max(worst.p, std::abs(std::exp(log_p) - ref_p));
      if (ref_p > 1e-4) worst.log_p = std::max(worst.log_p, std::abs(log_p - std::log(ref_p)));
    }
    gaps.push_back(pos_gap);
  }
  if (!gaps.empty()) {
    std::sort(gaps.begin(), gaps.end());
    worst.median_log_p = gaps[gaps.size() / 2];
  }
  return worst;
}

// llama.cpp runs with an F32 KV cache and without flash attention (which rounds q, k and v to
// F16). Stated tolerances, over 29 positions and every token llama.cpp gives p > 1e-4:
//   F32 weights: |d log p| <= 1e-4 (summation order only); gemma, gemma2, gemma3: <= 1e-3
//     (their GELU goes through an F16 table in both, and a last-bit difference in x can round
//     to the neighbouring F16 value).
//   Q8_0 / Q4_0 weights (activations quantized per 32-block by both): the median position
//     within |d log p| <= 1e-4, every position within |d log p| <= 0.1 and |d p| <= 0.01 (with
//     random weights an activation a rounding step away from a quantization boundary can land
//     on the other side when the float sums before it differ in the last bit).
TEST_F(LlamaCppMatch, NextTokenDistributionsWithinToleranceAlongASequence) {
  struct Case {
    std::string path;
    bool quantized = false, gelu = false;
  };
  std::vector<Case> cases = {{Models() + "/stories260K-f32.gguf", false, false},
                             {Models() + "/stories260K-q8_0.gguf", true, false},
                             {Models() + "/stories260K-q4_0.gguf", true, false}};
  std::vector<std::string> written;
  for (const char* arch : {"llama", "qwen2", "gemma", "gemma2", "gemma3"}) {
    for (GgmlType type : {GgmlType::kF32, GgmlType::kQ8_0}) {
      RandomModelShape shape = SmallShape(arch, type);
      std::string path = "/tmp/evald-dist-" + std::string(arch) + "-" +
                         std::to_string(static_cast<int>(type)) + ".gguf";
      ASSERT_TRUE(WriteRandomModel(shape, Models() + "/stories260K-f32.gguf", path).ok());
      written.push_back(path);
      cases.push_back({path, type != GgmlType::kF32, std::string(arch).rfind("gemma", 0) == 0});
    }
  }
  for (const auto& c : cases) {
    if (c.path.find("q4_0") != std::string::npos && !std::ifstream(c.path)) continue;
    Gap g = CompareDistributions(c.path, 24);
    if (c.quantized) {
      EXPECT_LE(g.median_log_p, 1e-4) << c.path;
      EXPECT_LE(g.log_p, 0.1) << c.path;
      EXPECT_LE(g.p, 0.01) << c.path;
    } else {
      EXPECT_LE(g.log_p, c.gelu ? 1e-3 : 1e-4) << c.path;
    }
    std::printf("%s: max |d log p| %.2e (median position %.2e), max |d p| %.2e\n", c.path.c_str(),
                g.log_p, g.median_log_p, g.p);
  }
  for (const auto& p : written) std::remove(p.c_str());
}

// Byte-level BPE (tokenizer.ggml.model = gpt2) with each pre-tokenizer: a vocabulary learned
// by evald from the built-in problems' Verilog and some prose, in a qwen2 file; ids identical to
// llama.cpp's on the same strings, and decoding gives the strings back.
TEST_F(LlamaCppMatch, BpeTokenizerIdsForEachPreTokenizer) {
  std::string corpus =
      "The quick brown fox jumps over the lazy dog. Don't we've they'll 1234567 89. "
      "Implement a module named TopModule with the interface described below.\n";
  for (const char* name : {"Bi01_and_gate", "Bi03_adder4", "Bi05_counter4"}) {
    auto text = ReadFileBounded(std::string(EVALD_SOURCE_DIR) +
                                "/datasets/builtin/dataset_spec-to-rtl/" + name + "_ref.sv");
    if (text.ok()) corpus += *text;
  }
  const std::vector<std::string>& strings = TokenizerStrings();
  for (const char* pre : {"qwen2", "llama-bpe", "gpt-2", "deepseek-coder"}) {
    std::string vocab = "/tmp/evald-bpe-vocab-" + std::string(pre) + ".gguf";
    std::string model = "/tmp/evald-bpe-model-" + std::string(pre) + ".gguf";
    ASSERT_TRUE(WriteBpeVocabulary(pre, corpus, 300, vocab).ok());
    RandomModelShape shape;
    shape.architecture = "qwen2";
    shape.dim = 64;
    shape.heads = 2;
    shape.kv_heads = 1;
    shape.hidden = 64;
    shape.layers = 1;
    ASSERT_TRUE(WriteRandomModel(shape, vocab, model).ok());
    google::protobuf::Value ref;
    ASSERT_TRUE(Reference(model, TokenizeRequest(strings), &ref)) << pre;
    const auto& lists = ref.struct_value().fields().at("tokenize").list_value();
    ASSERT_EQ(lists.values_size(), static_cast<int>(strings.size()));
    auto file = GgufFile::Open(model);
    ASSERT_TRUE(file.ok());
    auto tok = LoadTokenizer(**file);
    ASSERT_TRUE(tok.ok()) << tok.status().ToString();
    EXPECT_FALSE((*tok)->add_bos());
    for (size_t i = 0; i < strings.size(); ++i) {
      std::vector<int> got = (*tok)->Encode(strings[i], false);
      EXPECT_EQ(got, Ids(lists.values(static_cast<int>(i)))) << pre << ": " << strings[i];
      EXPECT_EQ((*tok)->Decode(got), strings[i]) << pre;
    }
    std::remove(vocab.c_str());
    std::remove(model.c_str());
  }
}

}  // namespace
}  // namespace evald::kernels
