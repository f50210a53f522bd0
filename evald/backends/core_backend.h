// Samples from evald's own decoding core on a local GGUF checkpoint, in this process: each
// request's n samples share one prefill and decode as a batch; sample first_index + i is
// drawn with seed + i, so a sample is the same whatever it was batched with.
#pragma once

#include <memory>

#include "evald/backends/core_engine.h"
#include "evald/backends/sampling_backend.h"

namespace evald {

class CoreBackend : public SamplingBackend {
 public:
  // `chat`: the system and user turns rendered in the engine's chat format (which must have
  // one: MakeCoreBackend checks), instead of joined as completion text.
  CoreBackend(std::shared_ptr<CoreEngine> engine, bool chat)
      : engine_(std::move(engine)), chat_(chat) {}
  std::string Kind() const override { return "core"; }
  std::string Describe() const override {
    return engine_->path() +
           (engine_->kv_cache() == kernels::KvCacheType::kQ8_0 ? " (kv q8_0)" : "");
  }
  std::string PromptFormat() const override;
  void Run(const std::vector<SampleRequest>& requests,
           const std::function<void(size_t, SampleResponse)>& done,
           const CancelToken& cancel) override;

 private:
  std::shared_ptr<CoreEngine> engine_;
  bool chat_ = false;
};

// The core's sampling options for backend settings (top_k -1 = off).
kernels::SamplingOptions CoreSamplingOptions(const SamplingSettings& s);
// The core's request for a backend request (completion prompt text or, with `chat`, the
// system and user messages; seeds, stops).
CoreRequest CoreRequestFor(const SampleRequest& request, bool chat = false);

}  // namespace evald
