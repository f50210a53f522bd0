#include "tests/fuzz/fuzz_targets.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <string_view>

#include "base/utf8.h"
#include "datasets/code_extractor.h"
#include "evald/backends/openai_wire.h"
#include "evald/backends/sse_parser.h"
#include "evald/cluster/slurm_client.h"
#include "evald/cluster/spool.h"
#include "evald/proto/worker.pb.h"
#include "evald/samples/samples_reader.h"
#include "harness/failure_category.h"
#include "harness/integrity_check.h"
#include "harness/self_checking_bench.h"
#include "harness/testbench_hardening.h"
#include "kernels/chat/chat_format.h"
#include "kernels/chat/jinja/template.h"
#include "kernels/gguf/gguf_file.h"
#include "kernels/model/llama_model.h"
#include "sandbox/frame_io.h"
#include "sandbox/sandbox_protocol.pb.h"

namespace evald::fuzz {

int ExtractAndClassify(const uint8_t* data, size_t size) {
  std::string_view text = View(data, size);
  for (Task task : {Task::kSpecToRtl, Task::kCodeComplete}) {
    ExtractedCode code = ExtractCode(task, text, "module TopModule();\n");
    if (code.code.empty() || code.code[0] != '\n') __builtin_trap();  // always starts with "\n"
    (void)BenchmarkVerdict(text, code.code);
  }
  // RTLLM: what [BEGIN]/[DONE] enclose, else the fenced blocks declaring a module, else the
  // whole response; never more than the response holds.
  ExtractedCode rtllm = ExtractCode(Task::kRtllm2, text, "");
  if (rtllm.method != "fence" && rtllm.method != "whole" && rtllm.method != "markers")
    __builtin_trap();
  if (rtllm.method == "whole" && rtllm.code != text) __builtin_trap();
  if (rtllm.method != "whole" && rtllm.code.size() > text.size() + 1) __builtin_trap();
  auto hardened = HardenTestbench(std::string(text), std::string(text), "f00d", "5ec2e7");
  (void)hardened;
  Problem self_checking;
  self_checking.testbench = self_checking.reference = std::string(text);
  self_checking.setup.pass_signal = PassSignal::kPassLine;
  self_checking.setup.design_module = self_checking.setup.reference_module = "m";
  (void)HardenSelfCheckingBench(self_checking, "f00d");
  return 0;
}

int RenderChatTemplate(const uint8_t* data, size_t size) {
  const std::string_view text = View(data, size);
  kernels::jinja::TemplateLimits limits;
  limits.work_units = 2'000'000;
  limits.max_call_depth = 16;
  auto t = kernels::jinja::Template::Parse(text, limits);
  if (!t.ok()) {
    if (t.status().message().empty()) __builtin_trap();
    return 0;
  }
  using kernels::jinja::TemplateInput;
  auto message = [](std::string role, std::string_view content) {
    return TemplateInput::Map({{"role", TemplateInput::String(std::move(role))},
                               {"content", TemplateInput::String(std::string(content))}});
  };
  auto out = t->Render(
      {{"messages",
        TemplateInput::List({message("system", text.substr(0, size / 2)), message("user", text),
                             message("assistant", "a"), message("user", text.substr(size / 2))})},
       {"bos_token", TemplateInput::String("<s>")},
       {"add_generation_prompt", TemplateInput::Boolean(true)},
       {"tools", TemplateInput::List({TemplateInput::Map({{"n", TemplateInput::Number(1.5)}})})}});
  if (!out.ok() && out.status().message().empty()) __builtin_trap();
  return 0;
}

int ParseServerStream(const uint8_t* data, size_t size) {
  std::string_view body = View(data, size);
  // The split points come from the data itself, so the fuzzer explores them too.
  const size_t cut = size ? data[0] % (size + 1) : 0;
  SseParser parser(4096);
  size_t events = 0;
  auto on = [&](std::string_view event) {
    ++events;
    auto r = ParseCompletionResponse(event);
    if (r.ok())
      for (const auto& c : r->choices()) (void)c.text().size();
  };
  parser.Feed(body.substr(0, cut), on);
  parser.Feed(body.substr(cut), on);
  parser.Finish(on);
  if (events > size + 1) __builtin_trap();  // every event needs at least one newline
  (void)ParseCompletionRequest(body);
  std::string clean = SanitizeUtf8(body);
  if (SanitizeUtf8(clean) != clean) __builtin_trap();  // the output is valid UTF-8
  if (Utf8SafeCut(clean, clean.size() / 2) > clean.size() / 2) __builtin_trap();
  return 0;
}

int ParseSpoolFiles(const uint8_t* data, size_t size) {
  const std::string text(View(data, size));
  v1::WorkerResult result;
  if (result.ParseFromString(text)) (void)result.verdict().verdict().size();
  v1::WorkerShard shard;
  if (shard.ParseFromString(text)) (void)shard.jobs_size();
  if (auto mark = ParsePendingMark(text)) {
    if (mark->index < 0 || mark->attempt < 1 || mark->job_id.empty()) __builtin_trap();
  }
  for (const auto& [task, state] : ParseSqueueTasks(text))
    if (task.find('_') == std::string::npos || state.state.empty()) __builtin_trap();
  return 0;
}

int ParseChatTemplate(const uint8_t* data, size_t size) {
  const std::string_view text = View(data, size);
  std::string_view trimmed = kernels::TrimJinja(text);
  if (kernels::TrimJinja(trimmed) != trimmed) __builtin_trap();  // idempotent
  const std::vector<kernels::ChatMessage> conversation = {
      {"system", std::string(text.substr(0, size / 3))},
      {"user", std::string(text.substr(size / 3))},
      {"assistant", std::string(text)},
      {"user", std::string(trimmed)}};
  for (const char* marker : {"", "<|turn>", "<start_of_turn>", "<|start_header_id|>",
                             "<|im_start|>", "<\xef\xbd\x9cUser\xef\xbd\x9c>"}) {
    auto format = kernels::RecognizeChatTemplate(std::string(marker) + std::string(text));
    if (!format.ok()) {
      if (*marker) __builtin_trap();  // a marker always names a family
      continue;
    }
    if (format->name.empty() || format->end_of_turn.empty()) __builtin_trap();
    // system, user, assistant, user: an order every family renders, whatever the bytes.
    auto rendered = kernels::RenderChat(*format, conversation, "<bos>");
    if (!rendered.ok() || rendered->size() < conversation[3].content.size()) __builtin_trap();
  }
  return 0;
}

int ParseSamples(const uint8_t* data, size_t size) {
  SamplesFile f = ParseSamplesJsonl(std::string(View(data, size)));
  for (const auto& s : f.samples) {
    if (s.problem.empty() || s.line <= 0) __builtin_trap();
  }
  return 0;
}

int ParseGguf(const uint8_t* data, size_t size) {
  auto file = kernels::GgufFile::FromBytes(std::string(View(data, size)));
  if (file.ok()) {
    auto model = kernels::LlamaModel::FromFile(std::move(*file));
    (void)model;
  }
  return 0;
}

int ReadSandboxFrame(const uint8_t* data, size_t size) {
  int fds[2];
  if (::pipe(fds) != 0) return 0;
  // Pipes hold 64 KiB; larger inputs are cut, which is enough to exercise the length checks.
  size_t n = size < 60000 ? size : 60000;
  if (n > 0 && ::write(fds[1], data, n) < 0) n = 0;
  ::close(fds[1]);
  sandbox::JobResponse response;
  (void)sandbox::ReadFrame(fds[0], &response, 1 << 20, 1000);
  ::close(fds[0]);
  return 0;
}

}  // namespace evald::fuzz
