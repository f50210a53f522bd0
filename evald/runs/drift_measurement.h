// Teacher-forced distribution drift of weight files of one checkpoint from a baseline file, on a
// benchmark's prompts followed by given completions (the references, a samples file's, or a
// run's own samples): per problem, per design category and overall, with bootstrap intervals
// over problems. Used by `evald drift` and by a run that asks for it (RunSpec.drift), so both
// measure the same way.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/cancel_token.h"
#include "base/status.h"
#include "datasets/dataset.h"
#include "datasets/prompt_builder.h"
#include "evald/proto/eval.pb.h"

namespace evald {

struct DriftOptions {
  // The prompts as a chat endpoint serves them: the system and user turns rendered by the base
  // file's template (or `chat_format`, for files without one), special tokens parsed. Else
  // plain completion text.
  bool chat = false;
  std::string chat_format;
  const CancelToken* cancel = nullptr;  // looked at between problems (optional)
};

class DriftMeasurement {
 public:
  // Loads the base file (its template parsed once, for chat).
  static StatusOr<std::unique_ptr<DriftMeasurement>> Open(const std::string& base_path,
                                                          const DriftOptions& options);
  ~DriftMeasurement();

  // The prompt as the base file's model is served it.
  StatusOr<std::string> PromptText(const Prompt& prompt) const;

  // Scores `completion` after `prompt_text` as `problem`'s text. A text longer than the model's
  // context is left out and named in skipped(); one whose completion adds no token is ignored.
  void Add(const Problem& problem, const std::string& prompt_text, const std::string& completion);
  size_t texts() const;
  const std::vector<std::string>& skipped() const { return skipped_; }

  // How far `candidate_path` drifts from the base over every added text. Fails when it is not
  // the same checkpoint (another vocabulary or tokenization) or when the token stops the work.
  StatusOr<v1::DriftVariant> Measure(const std::string& candidate_path) const;

 private:
  struct Model;
  struct ScoredText;
  static StatusOr<std::unique_ptr<Model>> LoadModel(const std::string& path);
  DriftMeasurement(std::unique_ptr<Model> base, const DriftOptions& options);
  std::vector<int> Tokens(const Model& model, const std::string& text) const;

  std::unique_ptr<Model> base_;
  DriftOptions options_;
  std::vector<ScoredText> texts_;
  std::vector<std::string> skipped_;
};

}  // namespace evald
