// The decoding core against llama.cpp itself (node-llama-cpp's prebuilt CPU build, installed by
// scripts/install-deps.sh into .cache/node-llama-cpp): identical token ids on a set of strings
// and identical greedy continuations for the F32 and Q8_0 stories260K files.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "evald/common/file_io.h"
#include "kernels/generate/generator.h"
#include "kernels/gguf/random_model.h"
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
  // apply): run a copy of the script placed beside the installed package.
  std::string script_dir = testing::SourceDir() + "/.cache/node-llama-cpp";
  std::string cmd = "cp " + testing::SourceDir() + "/tests/reference/llama_cpp_reference.mjs " +
                    script_dir + "/ && cd " + script_dir + " && node llama_cpp_reference.mjs '" +
                    model + "' '" + quoted + "' 2>/dev/null";
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

TEST_F(LlamaCppMatch, TokenizerIdsOnVerilogUnicodeWhitespaceAndDigits) {
  const std::vector<std::string> strings = {
      "Hello world",
      "module TopModule (\n  input clk,\n  input [7:0] in_,\n  output logic [7:0] out\n);",
      "always @(posedge clk) begin\n    if (reset) q <= 8'd0;\n    else q <= q + 1'b1;\nend",
      "   leading and    inner     spaces\n\n\n\ttabs\t\tand newlines  ",
      "digits 0 12 345 6789 1234567890 3.14159",
      "Unicode: h\xc3\xa9llo w\xc3\xb6rld \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x99\x82 "
      "\xce\xbb \xe2\x80\x94",
      "[BEGIN]\n```verilog\n// comment\n```\n[DONE]",
  };
  std::string request = "{\"tokenize\": [";
  for (size_t i = 0; i < strings.size(); ++i) {
    std::string json;
    google::protobuf::Value v;
    v.set_string_value(strings[i]);
    (void)google::protobuf::util::MessageToJsonString(v, &json);
    request += (i ? "," : "") + json;
  }
  request += "]}";
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

// Random-weight files of each architecture, written by evald, decoded greedily by both.
TEST_F(LlamaCppMatch, RandomLlamaQwen2AndGemmaFiles) {
  for (const char* arch : {"llama", "qwen2", "gemma"}) {
    for (GgmlType type : {GgmlType::kF32, GgmlType::kQ8_0}) {
      RandomModelShape shape;
      shape.architecture = arch;
      shape.dim = 128;
      shape.heads = 4;
      shape.kv_heads = 2;
      shape.hidden = 256;
      shape.layers = 2;
      shape.weight_type = type;
      shape.scale = 0.15f;
      if (std::string(arch) == "gemma")
        shape.head_dim = 64;  // gemma's head size exceeds dim / heads
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

}  // namespace
}  // namespace evald::kernels
