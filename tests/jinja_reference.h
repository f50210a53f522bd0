// The Jinja reference (@huggingface/jinja, run by tests/reference/jinja_render.mjs) for the
// chat-format and template-engine tests: each case rendered with add_generation_prompt true.
#pragma once

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "kernels/chat/chat_format.h"
#include "test_support.h"

namespace evald::testing {

struct JinjaCase {
  std::string template_text;
  std::vector<kernels::ChatMessage> messages;
  std::string bos, eos;
};

// The cases as the reference scripts read them, in a file named for this process.
inline std::string WriteJinjaCases(const std::vector<JinjaCase>& cases_in) {
  google::protobuf::Struct request;
  auto* cases = (*request.mutable_fields())["cases"].mutable_list_value();
  for (const auto& in : cases_in) {
    auto* c = cases->add_values()->mutable_struct_value()->mutable_fields();
    (*c)["template"].set_string_value(in.template_text);
    (*c)["bos_token"].set_string_value(in.bos);
    (*c)["eos_token"].set_string_value(in.eos);
    auto* messages = (*c)["messages"].mutable_list_value();
    for (const auto& m : in.messages) {
      auto* fields = messages->add_values()->mutable_struct_value()->mutable_fields();
      (*fields)["role"].set_string_value(m.role);
      (*fields)["content"].set_string_value(m.content);
    }
  }
  std::string json;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(request, &json).ok());
  const std::string path = "/tmp/evald-jinja-" + std::to_string(::getpid()) + ".json";
  EXPECT_TRUE(WriteFileAtomic(path, json).ok());
  return path;
}

// Cases as WriteJinjaCases writes them (the random template generator prints the same form).
inline std::vector<JinjaCase> ReadJinjaCases(const std::string& json) {
  google::protobuf::Struct in;
  std::vector<JinjaCase> cases;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &in).ok()) << json.substr(0, 200);
  if (!in.fields().count("cases")) return cases;
  for (const auto& c : in.fields().at("cases").list_value().values()) {
    const auto& f = c.struct_value().fields();
    JinjaCase& out = cases.emplace_back();
    out.template_text = f.at("template").string_value();
    out.bos = f.at("bos_token").string_value();
    out.eos = f.at("eos_token").string_value();
    for (const auto& m : f.at("messages").list_value().values())
      out.messages.push_back({m.struct_value().fields().at("role").string_value(),
                              m.struct_value().fields().at("content").string_value()});
  }
  return cases;
}

// A reference script's {"rendered": [...]}: each text, or an error as "JINJA ERROR: ...".
inline std::vector<std::string> ParseRendered(const ShellResult& r) {
  google::protobuf::Struct out;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.output, &out).ok()) << r.output;
  std::vector<std::string> texts;
  if (!out.fields().count("rendered")) return texts;
  for (const auto& v : out.fields().at("rendered").list_value().values()) {
    const auto& f = v.struct_value().fields();
    texts.push_back(f.count("text") ? f.at("text").string_value()
                                    : "JINJA ERROR: " + f.at("error").string_value());
  }
  return texts;
}

// What the reference (@huggingface/jinja) renders for each case, in order.
inline std::vector<std::string> JinjaRender(const std::vector<JinjaCase>& cases) {
  const std::string path = WriteJinjaCases(cases);
  auto r = RunNodeReference("jinja_render.mjs", ShellQuote(path));
  std::remove(path.c_str());
  return ParseRendered(r);
}

// Python's Jinja2 (Debian's python3-jinja2, under the system python), set up as transformers
// sets it up (tests/reference/jinja2_render.py).
inline bool HavePythonJinja2() {
  static const bool have =
      RunShell("/usr/bin/python3 -c 'import jinja2' 2>/dev/null").exit_code == 0;
  return have;
}
inline std::vector<std::string> PythonJinja2Render(const std::vector<JinjaCase>& cases) {
  const std::string path = WriteJinjaCases(cases);
  auto r = RunShell("/usr/bin/python3 " + SourceDir() + "/tests/reference/jinja2_render.py " +
                    ShellQuote(path));
  std::remove(path.c_str());
  return ParseRendered(r);
}

}  // namespace evald::testing
