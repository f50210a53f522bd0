#include "evald/cli/model_commands.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

#include "base/text_escape.h"
#include "evald/cli/memory_plan_command.h"
#include "evald/cli/report_io.h"
#include "kernels/chat/chat_renderer.h"
#include "kernels/generate/generator.h"
#include "kernels/gguf/gguf_writer.h"
#include "kernels/gguf/random_model.h"

namespace evald {

namespace {

using namespace evald::kernels;
using Clock = std::chrono::steady_clock;

struct Loaded {
  std::unique_ptr<LlamaModel> model;
  std::unique_ptr<Tokenizer> tokenizer;
};

StatusOr<Loaded> LoadModel(const std::string& path) {
  auto model = LlamaModel::Load(path);
  if (!model.ok()) return model.status();
  auto tok = LoadTokenizer((*model)->file());
  if (!tok.ok()) return tok.status().Annotate(path);
  Loaded l;
  l.model = std::move(*model);
  l.tokenizer = std::move(*tok);
  return l;
}

// Sequential read bandwidth, GB/s, with `threads` threads (the bound decoding with that many
// cannot beat): the best of five passes over 1 GiB (a pass can lose its core for a moment here),
// each thread's slice read as four streams side by side with independent accumulators, so that the
// loops are bound by memory rather than by an addition chain or by what one stream's prefetching
// keeps in flight. With every hardware thread it is the machine's limit; one core alone reads well
// below it here (about half).
double MeasureReadBandwidth(unsigned threads) {
  threads = std::max(1u, threads);
  const size_t quarter = (1u << 30) / 8 / threads / 4 / 8 * 8;  // words per stream
  std::vector<uint64_t> buf(quarter * 4 * threads, 1);
  std::vector<uint64_t> totals(threads, 0);
  auto read_slice = [&](unsigned t) {
    const uint64_t* p = buf.data() + quarter * 4 * t;
    uint64_t s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (size_t i = 0; i < quarter; i += 8)
      for (int k = 0; k < 8; ++k)
        s[k] += p[i + k] + p[quarter + i + k] + p[2 * quarter + i + k] + p[3 * quarter + i + k];
    for (uint64_t v : s) totals[t] += v;
  };
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = Clock::now();
    std::vector<std::thread> readers;
    for (unsigned t = 0; t < threads; ++t) readers.emplace_back(read_slice, t);
    for (auto& r : readers) r.join();
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, static_cast<double>(buf.size()) * 8 / secs / 1e9);
  }
  uint64_t total = 0;
  for (uint64_t v : totals) total += v;
  if (total == 42) std::cerr << "";  // the sums are used
  return best;
}

}  // namespace

void RegisterRandomModelCommand(CLI::App* bench, std::function<int()>* run);

namespace {

struct BenchFlags {
  std::string model, kv_cache = "f32";
  int n = 20, tokens = 64, threads = 1, context = 0;
  double bandwidth_gbs = 0;
};

// The bench's prompt, repeated until it fills `context` positions less the decoded tokens.
std::string BenchPrompt(const Tokenizer& tokenizer, int context, int tokens) {
  const std::string base = "Once upon a time, there was a little girl who";
  std::string prompt = base;
  const size_t want = static_cast<size_t>(std::max(0, context - tokens - 1));
  while (context > 0 && tokenizer.Encode(prompt + " " + base, true).size() <= want)
    prompt += " " + base;
  return prompt;
}

// Times one Generate call's decode steps from its progress callbacks: from the first token
// (drawn from the prefill's logits) to the last token any sample gained, one forward step per
// token after the first, as llama.cpp's reference (tests/reference/llama_cpp_reference.mjs)
// times its own. The prefill stays out, whatever the prompt's length.
class StepClock {
 public:
  // Installs the clock in `options` (replacing its callback); the clock must outlive the call.
  void Attach(GenerateOptions& options) {
    options.on_update = [this](int, const Completion& c, bool) {
      const int tokens = static_cast<int>(c.tokens.size());
      if (tokens > most_) {
        most_ = tokens;
        last_ = Clock::now();
        if (tokens == 1) first_ = last_;
      }
      return true;
    };
  }
  int steps() const { return most_ - 1; }
  double SecondsPerStep() const {
    return steps() > 0 ? std::chrono::duration<double>(last_ - first_).count() / steps() : 0;
  }

 private:
  int most_ = 0;
  Clock::time_point first_, last_;
};

// Prefill and decode speed of one sample and of n in lockstep, against the memory-bandwidth
// limit (every weight read once per decoded token).
int RunBenchDecode(const BenchFlags& b) {
  auto loaded = LoadModel(b.model);
  if (!loaded.ok()) return Fail(loaded.status());
  const Isa isa = DetectIsa();
  auto kv = ParseKvCacheType(b.kv_cache);
  if (!kv.ok()) return Fail(kv.status());
  if (Status st = CheckKvCacheType(loaded->model->config(), *kv); !st.ok()) return Fail(st);
  const std::string prompt = BenchPrompt(*loaded->tokenizer, b.context, b.tokens);
  uint64_t weight_bytes = 0;
  for (const auto& t : loaded->model->file().tensors()) weight_bytes += t.bytes;
  // Prefill alone (max_tokens 0) for the prefill figure, then prefill + decode, whose steps a
  // StepClock times (subtracting the two runs drowned the steps in the prefill's noise at long
  // prompts). A first untimed run pages the weights in, so that no timing includes the file's
  // loading.
  GenerateOptions prefill_only;
  prefill_only.max_tokens = 0;
  prefill_only.threads = b.threads;
  prefill_only.kv_cache = *kv;
  GenerateOptions warm = prefill_only;
  warm.max_tokens = 2;
  if (auto w = Generate(*loaded->model, *loaded->tokenizer, prompt, warm); !w.ok())
    return Fail(w.status());
  auto t0 = Clock::now();
  auto r0 = Generate(*loaded->model, *loaded->tokenizer, prompt, prefill_only);
  if (!r0.ok()) return Fail(r0.status());
  const double prefill_secs = std::chrono::duration<double>(Clock::now() - t0).count();
  const int prompt_tokens = (*r0)[0].prompt_tokens;
  GenerateOptions one = prefill_only;
  one.max_tokens = b.tokens;
  StepClock one_steps;
  one_steps.Attach(one);
  t0 = Clock::now();
  auto r1 = Generate(*loaded->model, *loaded->tokenizer, prompt, one);
  if (!r1.ok()) return Fail(r1.status());
  const double secs1 = std::chrono::duration<double>(Clock::now() - t0).count();
  const int decoded1 = static_cast<int>((*r1)[0].tokens.size());
  GenerateOptions many = one;
  many.n = b.n;
  many.sampling.temperature = 0.8f;
  many.merge_identical_samples = false;  // the batch of n itself, however the samples draw
  StepClock many_steps;
  many_steps.Attach(many);
  t0 = Clock::now();
  auto rn = Generate(*loaded->model, *loaded->tokenizer, prompt, many);
  if (!rn.ok()) return Fail(rn.status());
  const double secsn = std::chrono::duration<double>(Clock::now() - t0).count();
  int decodedn = 0;
  for (const auto& c : *rn) decodedn += static_cast<int>(c.tokens.size());
  // One token is no step: then the whole run stands for it.
  const double decode_tps =
      one_steps.steps() > 0 ? 1.0 / one_steps.SecondsPerStep() : decoded1 / secs1;
  const bool measured = b.bandwidth_gbs <= 0;
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const double bw = measured ? MeasureReadBandwidth(hardware) : b.bandwidth_gbs;
  const double limit = bw * 1e9 / static_cast<double>(weight_bytes);
  std::cout << fmt::format(
      "model {} ({:.1f} MB of weights), kernels {} ({} matrices packed), {} thread(s)\n", b.model,
      weight_bytes / 1e6, IsaName(isa), loaded->model->packed_matrices(), b.threads);
  std::cout << fmt::format("prefill: {:.1f} tok/s ({} tokens)\n", prompt_tokens / prefill_secs,
                           prompt_tokens);
  const int64_t positions =
      std::min<int64_t>(loaded->model->config().context, prompt_tokens + b.tokens);
  std::cout << fmt::format(
      "KV cache {}: {:.1f} MB for one sample, {:.1f} MB for n={} ({} positions, the prompt's {} "
      "held once)\n",
      KvCacheTypeName(*kv), KvCacheBytes(loaded->model->config(), *kv, positions, 1) / 1e6,
      KvCacheBytes(loaded->model->config(), *kv, positions, b.n, prompt_tokens) / 1e6, b.n,
      positions, prompt_tokens);
  std::cout << fmt::format(
      "decode: {:.1f} tok/s (1 sample, {} tokens; from the first token to the last)\n", decode_tps,
      decoded1);
  std::string per_step;
  if (one_steps.steps() > 0 && many_steps.steps() > 0)
    per_step = fmt::format("; a decode step {:.2f}x one sample's",
                           many_steps.SecondsPerStep() / one_steps.SecondsPerStep());
  std::cout << fmt::format(
      "n={}: {:.1f} tok/s aggregate (prefill included), {:.2f}x the time of one sample{}\n", b.n,
      decodedn / secsn, secsn / secs1, per_step);
  std::cout << fmt::format(
      "memory read bandwidth {:.1f} GB/s ({}) -> limit {:.1f} tok/s; "
      "decode reaches {:.1f}%\n",
      bw, measured ? "measured, all hardware threads" : "given", limit, 100.0 * decode_tps / limit);
  if (measured && static_cast<unsigned>(b.threads) < hardware) {
    // What the decoding threads alone could read: the bound for this thread count.
    const double own = MeasureReadBandwidth(static_cast<unsigned>(b.threads));
    const double own_limit = own * 1e9 / static_cast<double>(weight_bytes);
    std::cout << fmt::format(
        "memory read bandwidth of {} thread(s), as decoded: {:.1f} GB/s -> limit {:.1f} tok/s; "
        "decode reaches {:.1f}%\n",
        b.threads, own, own_limit, 100.0 * decode_tps / own_limit);
  }
  return 0;
}

// One line per generated token: its position, text, log-prob and the likeliest tokens'.
void PrintLogprobs(const Completion& c, const Tokenizer& tokenizer) {
  auto quoted = [&](int token) { return "'" + EscapeControl(tokenizer.Piece(token)) + "'"; };
  std::cout << "log-probs (position, token, log p, then the likeliest tokens and theirs):\n";
  for (size_t i = 0; i < c.logprobs.size(); ++i) {
    const StepLogprobs& step = c.logprobs[i];
    // Tab-separated: a token's text may hold spaces (control characters are escaped).
    std::string line =
        fmt::format("{}\t{}\t{:.4f}", i, quoted(step.chosen.token), step.chosen.logprob);
    for (const auto& t : step.top) line += fmt::format("\t{}\t{:.4f}", quoted(t.token), t.logprob);
    std::cout << line << "\n";
  }
}

struct GenFlags {
  std::string model, prompt, system, chat_format;
  bool chat = false, print_prompt = false;
  int n = 1, max_tokens = 256, top_k = 0, threads = 1, logprobs = -1;
  std::string kv_cache;
  float temperature = 0, top_p = 1, min_p = 0;
  uint64_t seed = 0;
  std::vector<std::string> stop;
};

// What the model reads: the prompt as given, or (--chat) the system and user turns rendered by
// the file's own chat template (or --chat-format); with the tokens that end a model turn.
struct PromptInput {
  std::string text;
  std::vector<int> tokens;
  std::vector<int> end_tokens;
};

StatusOr<PromptInput> GeneratePrompt(const GenFlags& g, const Loaded& loaded) {
  PromptInput p;
  const Tokenizer& tok = *loaded.tokenizer;
  if (!g.chat) {
    p.text = g.prompt;
    p.tokens = tok.Encode(p.text, tok.add_bos());
    return p;
  }
  auto renderer = ChatRenderer::ForFile(loaded.model->file().GetString("tokenizer.chat_template"),
                                        g.chat_format, g.model);
  if (!renderer.ok()) return renderer.status();
  auto text =
      renderer->Render(SystemAndUserTurns(g.system, g.prompt), tok.bos_text(), EosText(tok));
  if (!text.ok()) return text.status();
  p.text = std::move(*text);
  p.tokens = ChatPromptTokens(tok, p.text);
  p.end_tokens = renderer->EndOfTurnTokens(tok);
  spdlog::info("chat rendered with {}", renderer->description());
  return p;
}

void RegisterGenerateCommand(CLI::App& app, std::function<int()>* run) {
  auto g = std::make_shared<GenFlags>();
  auto* gen = app.add_subcommand("generate", "sample completions from a local GGUF checkpoint");
  gen->add_option("--model", g->model, "GGUF file (llama architecture)")->required();
  gen->add_option("--prompt", g->prompt, "prompt text (with --chat: the user message)")->required();
  gen->add_flag("--chat", g->chat,
                "send --prompt as a user message, rendered by the file's own chat template");
  gen->add_option("--system", g->system, "a system message before it (implies --chat)");
  gen->add_option("--chat-format", g->chat_format,
                  "render chats in this family's format instead (for files without a template): " +
                      ChatFormatNameList());
  gen->add_flag("--print-prompt", g->print_prompt,
                "print the text the model reads (the chat as rendered) and its token count first");
  gen->add_option("--n", g->n, "samples")->check(CLI::Range(1, 1024));
  gen->add_option("--max-tokens", g->max_tokens, "tokens per sample")
      ->check(CLI::Range(0, 1 << 20));
  gen->add_option("--temperature", g->temperature, "0: greedy");
  gen->add_option("--top-p", g->top_p);
  gen->add_option("--top-k", g->top_k);
  gen->add_option("--min-p", g->min_p);
  gen->add_option("--seed", g->seed, "sample i uses seed + i");
  gen->add_option("--stop", g->stop, "stop strings");
  gen->add_option("--threads", g->threads, "threads (a non-spinning pool)")
      ->check(CLI::Range(1, 256));
  gen->add_option("--kv-cache", g->kv_cache, "f32 (default) | q8_0");
  gen->add_option("--logprobs", g->logprobs,
                  "after each sample, every token's log-prob and the K likeliest tokens' (the "
                  "model's distribution, before temperature and the sampler's cuts)")
      ->check(CLI::Range(0, kMaxTopLogprobs));
  gen->callback([g, run] {
    *run = [g]() -> int {
      auto loaded = LoadModel(g->model);
      if (!loaded.ok()) return Fail(loaded.status());
      if (!g->system.empty() || !g->chat_format.empty()) g->chat = true;
      auto prompt = GeneratePrompt(*g, *loaded);
      if (!prompt.ok()) return Fail(prompt.status());
      if (g->print_prompt)
        std::cout << "--- prompt (" << prompt->tokens.size() << " tokens) ---\n"
                  << prompt->text << "\n--- end of prompt ---\n";
      GenerateOptions o;
      o.n = g->n;
      o.max_tokens = g->max_tokens;
      o.seed = g->seed;
      o.sampling = {g->temperature, g->top_k, g->top_p, g->min_p};
      o.stop = g->stop;
      o.threads = g->threads;
      o.logprobs = g->logprobs;
      auto kv = ParseKvCacheType(g->kv_cache);
      if (!kv.ok()) return Fail(kv.status());
      o.kv_cache = *kv;
      o.end_tokens = prompt->end_tokens;
      GenerateStats stats;
      o.stats = &stats;
      auto out = GenerateFromTokens(*loaded->model, *loaded->tokenizer, prompt->tokens, o);
      if (!out.ok()) return Fail(out.status());
      if (o.n > 1)
        std::cerr << fmt::format(
            "decode: {} sample-steps computed as {} vectors (samples with the same tokens so "
            "far run as one)\n",
            stats.sample_steps, stats.vectors);
      for (size_t i = 0; i < out->size(); ++i) {
        if (out->size() > 1)
          std::cout << "--- sample " << i << " (" << (*out)[i].finish_reason << ") ---\n";
        std::cout << (g->chat ? "" : g->prompt) << (*out)[i].text << "\n";
        if (g->logprobs >= 0) PrintLogprobs((*out)[i], *loaded->tokenizer);
      }
      return 0;
    };
  });
}

void RegisterQuantizeCommand(CLI::App& app, std::function<int()>* run) {
  struct QuantFlags {
    std::string in, out, type;
  };
  auto q = std::make_shared<QuantFlags>();
  auto* quant = app.add_subcommand("quantize", "quantize a GGUF checkpoint's F32/F16/BF16 weights");
  quant->add_option("IN", q->in)->required();
  quant->add_option("OUT", q->out)->required();
  quant->add_option("--type", q->type, "q8_0 | q4_0")->required();
  quant->callback([q, run] {
    *run = [q]() -> int {
      GgmlType t;
      if (q->type == "q8_0") {
        t = GgmlType::kQ8_0;
      } else if (q->type == "q4_0") {
        t = GgmlType::kQ4_0;
      } else {
        return Fail(Status::InvalidArgument("--type must be q8_0 or q4_0"));
      }
      auto n = QuantizeModel(q->in, q->out, t);
      if (!n.ok()) return Fail(n.status());
      std::cout << "quantized " << *n << " tensors to " << q->type << ": " << q->out << "\n";
      return 0;
    };
  });
}

void RegisterBenchCommands(CLI::App& app, std::function<int()>* run) {
  auto b = std::make_shared<BenchFlags>();
  auto* bench = app.add_subcommand("bench", "benchmarks");
  RegisterRandomModelCommand(bench, run);
  RegisterPlanMemoryCommand(bench, run);
  auto* decode = bench->add_subcommand("decode", "prefill and decode speed of a local checkpoint");
  decode->add_option("--model", b->model)->required();
  decode->add_option("--n", b->n, "samples for the n-way figure")->check(CLI::Range(1, 256));
  decode->add_option("--tokens", b->tokens, "tokens decoded per sample")
      ->check(CLI::Range(1, 4096));
  decode->add_option("--threads", b->threads, "threads")->check(CLI::Range(1, 256));
  decode->add_option("--kv-cache", b->kv_cache, "f32 (default) | q8_0");
  decode
      ->add_option("--context", b->context,
                   "fill the prompt up to this many positions (default: a short prompt)")
      ->check(CLI::Range(0, 1 << 20));
  decode->add_option(
      "--bandwidth", b->bandwidth_gbs,
      "memory read bandwidth in GB/s for the limit (default: measured, all hardware threads)");
  decode->callback([b, run] { *run = [b] { return RunBenchDecode(*b); }; });
}

}  // namespace

void RegisterModelCommands(CLI::App& app, std::function<int()>* run) {
  RegisterGenerateCommand(app, run);
  RegisterQuantizeCommand(app, run);
  RegisterBenchCommands(app, run);
}

void RegisterRandomModelCommand(CLI::App* bench, std::function<int()>* run) {
  auto shape = std::make_shared<RandomModelShape>();
  auto paths = std::make_shared<std::pair<std::string, std::string>>();  // vocab, out
  auto type = std::make_shared<std::string>("q4_0");
  auto* cmd = bench->add_subcommand("make-model",
                                    "write a random-weight GGUF of a given shape (benchmarks)");
  cmd->add_option("OUT", paths->second)->required();
  cmd->add_option("--vocab", paths->first, "GGUF file whose tokenizer is copied")->required();
  cmd->add_option("--arch", shape->architecture, "llama | qwen2 | gemma");
  cmd->add_option("--dim", shape->dim);
  cmd->add_option("--layers", shape->layers);
  cmd->add_option("--heads", shape->heads);
  cmd->add_option("--kv-heads", shape->kv_heads);
  cmd->add_option("--hidden", shape->hidden);
  cmd->add_option("--context", shape->context);
  cmd->add_option("--type", *type, "f32 | q8_0 | q4_0");
  cmd->callback([shape, paths, type, run] {
    *run = [shape, paths, type]() -> int {
      if (*type == "f32") {
        shape->weight_type = GgmlType::kF32;
      } else if (*type == "q8_0") {
        shape->weight_type = GgmlType::kQ8_0;
      } else if (*type == "q4_0") {
        shape->weight_type = GgmlType::kQ4_0;
      } else {
        return Fail(Status::InvalidArgument("--type must be f32, q8_0 or q4_0"));
      }
      shape->scale = 0.02f;
      Status st = WriteRandomModel(*shape, paths->first, paths->second);
      return st.ok() ? 0 : Fail(st);
    };
  });
}

}  // namespace evald
