#include "evald/cli/memory_plan_command.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "base/memory_info.h"
#include "evald/cli/report_io.h"
#include "kernels/gguf/gguf_file.h"
#include "kernels/gguf/random_model.h"
#include "kernels/model/memory_plan.h"

namespace evald {

namespace {

using namespace evald::kernels;

struct PlanFlags {
  std::string model, layout, type = "q4_0", kv_cache = "f32";
  int context = 8192, n = 1, threads = 1, prompt = 0;
};

std::string Gb(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  return b >= 1e8 ? fmt::format("{:.2f} GB", b / 1e9) : fmt::format("{:.1f} MB", b / 1e6);
}

void Print(const std::string& source, const MemoryPlan& p, const PlanFlags& f) {
  const LlamaConfig& c = p.config;
  int sliding = 0;
  for (const auto& s : c.layer) sliding += s.sliding;
  const double params = static_cast<double>(p.parameters);
  std::cout << fmt::format(
      "{} ({}, {} layers of {}{}, {})\n", source, c.architecture, c.n_layers, c.dim,
      sliding ? fmt::format(", {} sliding (window {})", sliding, c.sliding_window) : "",
      params >= 1e9 ? fmt::format("{:.2f} B parameters", params / 1e9)
                    : fmt::format("{:.2f} M parameters", params / 1e6));
  std::cout << fmt::format("  {:<34} {}\n", "weights (memory-mapped file data)", Gb(p.weights));
  std::cout << fmt::format(
      "  {:<34} {} for n={} x {} positions{}\n", "KV cache (" + f.kv_cache + ")", Gb(p.kv_cache),
      f.n, f.context,
      f.prompt > 0 && f.n > 1 ? fmt::format(", the first {} a prompt held once", f.prompt) : "");
  if (sliding) {
    const LayerShape& swa = *std::find_if(c.layer.begin(), c.layer.end(),
                                          [](const LayerShape& s) { return s.sliding; });
    const int64_t slots = CachedPositions(c, swa, f.context);
    std::cout << fmt::format(
        "  {:<34} the {} sliding layers keep {} positions each (a ring of "
        "the window and one prefill chunk){}\n",
        "", sliding, slots,
        f.prompt > 0 && f.n > 1
            ? fmt::format("; samples 2..n fill {} of their slots (the prompt is the first's)",
                          std::min<int64_t>(slots, std::max<int64_t>(0, f.context - f.prompt)))
            : "");
  }
  std::cout << fmt::format("  {:<34} {:.1f} MB\n", "scratch (activations, logits)",
                           static_cast<double>(p.scratch) / 1e6);
  const int64_t available = AvailableMemoryBytes();
  std::cout << fmt::format("  {:<34} {}", "total", Gb(p.total()));
  if (available > 0)
    std::cout << fmt::format(" - this machine has {} available: {}", Gb(available),
                             p.total() <= available ? "fits" : "does NOT fit");
  std::cout << "\n";
}

int RunPlanMemory(const PlanFlags& f) {
  auto kv = ParseKvCacheType(f.kv_cache);
  if (!kv.ok()) return Fail(kv.status());
  std::string path = f.model, source = f.model, scratch_dir;
  if (!f.layout.empty()) {
    // A published layout: its metadata and tensor table written as a sparse file (the weights a
    // hole), then read like any checkpoint.
    auto type = f.type == "q8_0"  ? GgmlType::kQ8_0
                : f.type == "f32" ? GgmlType::kF32
                                  : GgmlType::kQ4_0;
    if (f.type != "q8_0" && f.type != "f32" && f.type != "q4_0")
      return Fail(Status::InvalidArgument("--type must be f32, q8_0 or q4_0"));
    auto layout = KnownModelLayout(f.layout, type);
    if (!layout.ok()) return Fail(layout.status());
    std::string dir = (std::filesystem::temp_directory_path() / "evald-layout-XXXXXX").string();
    if (!::mkdtemp(dir.data())) return Fail(Status::IoError("cannot create a temporary folder"));
    scratch_dir = dir;
    path = dir + "/" + f.layout + ".gguf";
    source = f.layout + " " + f.type + " (layout, no weights)";
    if (Status st = WriteModelLayout(*layout, path); !st.ok()) {
      std::filesystem::remove_all(scratch_dir);
      return Fail(st);
    }
  }
  auto file = GgufFile::Open(path);
  StatusOr<MemoryPlan> plan = file.ok()
                                  ? PlanMemory(**file, f.context, f.n, *kv, f.threads, f.prompt)
                                  : StatusOr<MemoryPlan>(file.status());
  if (!scratch_dir.empty()) std::filesystem::remove_all(scratch_dir);
  if (!plan.ok()) return Fail(plan.status().Annotate(source));
  Print(source, *plan, f);
  return 0;
}

}  // namespace

void RegisterPlanMemoryCommand(CLI::App* bench, std::function<int()>* run) {
  auto f = std::make_shared<PlanFlags>();
  auto* cmd = bench->add_subcommand(
      "plan-memory", "memory a checkpoint needs (weights, KV cache, scratch), from its metadata");
  auto* source = cmd->add_option_group("source");
  source->add_option("--model", f->model, "a GGUF checkpoint (its weights are not read)");
  source->add_option("--layout", f->layout,
                     "a published model's layout instead: gemma4-31b | llama2-7b");
  source->require_option(1);
  cmd->add_option("--type", f->type, "--layout: its weights' type, q4_0 (default) | q8_0 | f32");
  cmd->add_option("--context", f->context, "positions per sequence (default 8192)")
      ->check(CLI::Range(1, 1 << 22));
  cmd->add_option("--n", f->n, "sequences decoded together (samples)")->check(CLI::Range(1, 1024));
  cmd->add_option("--prompt", f->prompt,
                  "positions of a prompt the n samples share (held once; default 0)")
      ->check(CLI::Range(0, 1 << 22));
  cmd->add_option("--kv-cache", f->kv_cache, "f32 (default) | q8_0");
  cmd->add_option("--threads", f->threads, "decoding threads")->check(CLI::Range(1, 256));
  cmd->callback([f, run] { *run = [f] { return RunPlanMemory(*f); }; });
}

}  // namespace evald
