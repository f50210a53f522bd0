// What the attention kernels of every instruction set share, so that they compute the same.
#pragma once

#include <cmath>

namespace evald::kernels {

// Softmax of scores[first..last] in place (exp(score - max)); returns the sum, in double as the
// scalar oracle and ggml's softmax accumulate it.
inline double SoftmaxNumerators(float* scores, int first, int last, float max) {
  double sum = 0;
  for (int t = first; t <= last; ++t) {
    scores[t] = std::exp(scores[t] - max);
    sum += scores[t];
  }
  return sum;
}

inline float Cap(float score, float softcap) {
  return softcap > 0 ? std::tanh(score / softcap) * softcap : score;
}

}  // namespace evald::kernels
