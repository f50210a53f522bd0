// Completions from a local checkpoint: prompt -> tokens -> decode with sampling until EOS, a
// stop string or max_tokens. Sample i uses seed + i.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "evald/common/status.h"
#include "kernels/generate/sampler.h"
#include "kernels/model/llama_model.h"
#include "kernels/tokenizer/spm_tokenizer.h"

namespace evald::kernels {

struct GenerateOptions {
  int n = 1;
  int max_tokens = 256;
  uint64_t seed = 0;
  SamplingOptions sampling;
  std::vector<std::string> stop;
  int threads = 1;  // matrix rows split over this many threads (a non-spinning pool)
};

struct Completion {
  std::string text;
  std::vector<int> tokens;
  int prompt_tokens = 0;
  std::string finish_reason;  // "stop" (EOS or a stop string) or "length"
};

StatusOr<std::vector<Completion>> Generate(const LlamaModel& model, const SpmTokenizer& tokenizer,
                                           const std::string& prompt,
                                           const GenerateOptions& options, Isa isa);

}  // namespace evald::kernels
