// evald's decoding core behind one lock: a GGUF model and its tokenizer loaded once, generating
// for one request at a time (the n samples of a request share the prefill and decode as a
// batch). Text is handed out as it becomes final - never a byte that a stop string could still
// remove, never half a UTF-8 character - so that servers can stream it.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/thread_annotations.h"
#include "evald/proto/eval.pb.h"
#include "kernels/chat/chat_format.h"
#include "kernels/chat/chat_renderer.h"
#include "kernels/generate/generator.h"
#include "kernels/model/llama_model.h"
#include "kernels/ops/dot.h"
#include "kernels/tokenizer/tokenizer.h"

namespace evald {

struct CoreRequest {
  std::string prompt;  // plain text; or, when `messages` is set, rendered from them
  std::vector<kernels::ChatMessage> messages;  // a chat, in the model's chat format
  int n = 1;
  int max_tokens = 256;
  uint32_t seed = 0;  // sample i: seed + i
  kernels::SamplingOptions sampling;
  std::vector<std::string> stop;
  int logprobs = -1;  // -1: none; K: each token's log-prob and the K likeliest (kernels::)
};

struct CoreResult {
  std::vector<kernels::Completion> completions;  // text valid UTF-8
  std::string prompt_text;  // what was tokenized: the prompt, or the chat as rendered
  int prompt_tokens = 0;
  v1::RequestTiming timing;  // TTFT = first text out; ITL = gaps between decode steps
};

class CoreEngine {
 public:
  // Called with new final text of sample `sample` (possibly empty when it finishes), the
  // log-probs of exactly the tokens that text completes (when asked for) and, when it has
  // finished, its finish reason; returning false cancels the request.
  using OnText = std::function<bool(int sample, std::string_view delta, const char* finish,
                                    std::span<const kernels::StepLogprobs> logprobs)>;

  struct Options {
    int threads = 1;
    // How each request's KV cache holds keys and values (q8_0: a quarter of the memory).
    kernels::KvCacheType kv = kernels::KvCacheType::kF32;
    // How chats are rendered: a name from kernels::ChatFormatNames(), or empty for the file's
    // own tokenizer.chat_template run by the template engine.
    std::string chat_format;
    // Bytes a request's samples may hold in KV cache and scratch once all reach max_tokens;
    // more is refused (ResourceExhausted) before anything runs. 0: the memory the machine has
    // available at the time.
    int64_t memory_budget = 0;
  };
  static StatusOr<std::unique_ptr<CoreEngine>> Load(const std::string& path,
                                                    const Options& options);

  StatusOr<CoreResult> Generate(const CoreRequest& request, const OnText& on_text = {})
      EXCLUDES(mu_);

  // A token's text as the tokenizer writes it (raw bytes: possibly part of a UTF-8 character).
  std::string TokenPiece(int token) const { return tokenizer_->Piece(token); }
  const std::string& name() const { return name_; }  // the file's general.name or file name
  const std::string& path() const { return path_; }
  int context() const { return model_->config().context; }
  kernels::KvCacheType kv_cache() const { return kv_; }
  // What chats are rendered with ("tokenizer.chat_template sha256:...", "gemma (--chat-format)"),
  // or why they cannot be (no template, one the engine refuses): an error for every chat.
  StatusOr<std::string> ChatFormatInUse() const;
  // The text a request's prompt is tokenized from: its prompt, or its chat rendered.
  StatusOr<std::string> PromptText(const CoreRequest& request) const;

 private:
  std::string path_, name_;
  int threads_ = 1;
  kernels::KvCacheType kv_ = kernels::KvCacheType::kF32;
  int64_t memory_budget_ = 0;
  std::unique_ptr<kernels::LlamaModel> model_;
  std::unique_ptr<kernels::Tokenizer> tokenizer_;
  StatusOr<kernels::ChatRenderer> chat_ = Status::NotFound("no chat format");

  StatusOr<std::vector<int>> PromptTokens(const CoreRequest& request,
                                          const std::string& text) const;
  Mutex mu_;  // one request at a time: the model's decoding state is one
};

}  // namespace evald
