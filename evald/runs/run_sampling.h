// What a run needs to sample from a checkpoint: its settings normalised (verilog-eval's presets,
// defaults, ranges), checkpoints checked at registration, and the backend built for it.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "evald/backends/sampling_backend.h"
#include "evald/proto/records.pb.h"
#include "evald/runs/operator_policy.h"

namespace evald {

// Applies the preset ("greedy": temperature 0, top_p 0.01, n 1; "sampled": temperature 0.85,
// top_p 0.95, n 20), fills defaults (n 1, top_p 1, max_tokens 1024, 4 attempts, 600 s) and
// checks every range.
Status NormalizeSampling(v1::SamplingParams* sampling);

// Infers the format ("gguf" with a location, "remote" with an endpoint, else "samples"; a
// "recorded" checkpoint is a samples JSONL file generated elsewhere, named explicitly) and
// checks the fields it needs against what the operator allows (operator_policy.h): a file in an
// allowed directory (its canonical path is kept), endpoints on the operator's list and a model
// name, an API flavour, a key by the name of a declared secret.
Status NormalizeCheckpoint(v1::Checkpoint* checkpoint, const OperatorPolicy& policy);

// "remote", "core" or "recorded" for a checkpoint that can be sampled, else "samples".
std::string BackendFor(const v1::Checkpoint& checkpoint);

SamplingSettings SettingsOf(const v1::SamplingParams& sampling);

struct BackendOptions {
  int decode_threads = 1;          // core backend
  double backoff_initial_s = 0.5;  // remote backend (tests shorten it)
  // What the backend may read and reach, checked again when it is built (a name may resolve
  // elsewhere by now, a file may be gone).
  const OperatorPolicy* policy = nullptr;
};

StatusOr<std::unique_ptr<SamplingBackend>> MakeBackend(const v1::Checkpoint& checkpoint,
                                                       const v1::RunSpec& spec,
                                                       const BackendOptions& options);

}  // namespace evald
