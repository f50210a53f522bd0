// How far a quantized weight file's next-token distributions drift from its baseline's on the
// same tokens (teacher forcing), as llama.cpp's `perplexity --kl-divergence` measures it: per
// token KL(P_base || P_candidate), whether the likeliest token is the same, the change in the
// probability of the token that follows; over tokens the mean and 99th percentile of KL, the
// share of agreeing top tokens, the RMS of that change and the perplexity ratio.
#pragma once

#include <span>
#include <vector>

#include "evald/proto/eval.pb.h"

namespace evald {

struct TokenDrift {
  double kl = 0;
  bool same_top = false;
  double p_base = 0, p_candidate = 0;  // of the token that follows
};

// `base` and `candidate`: log-probabilities over one vocabulary; `next`: the token that follows.
TokenDrift CompareNextToken(std::span<const float> base, std::span<const float> candidate,
                            int next);

// Tokens' drifts summed up.
class DriftAccumulator {
 public:
  void Add(const TokenDrift& d);
  void Merge(const DriftAccumulator& other);
  int tokens() const { return static_cast<int>(kl_.size()); }
  // mean/p99 KL, top-1 agreement, RMS delta p, perplexity ratio (candidate / base).
  v1::DriftFigures Figures() const;

 private:
  std::vector<double> kl_;
  int same_top_ = 0;
  double dp_squares_ = 0, nll_base_ = 0, nll_candidate_ = 0;
};

}  // namespace evald
