#include "kernels/generate/token_logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace evald::kernels {

double LogSumExp(const float* logits, int vocab) {
  float max = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < vocab; ++i) max = std::max(max, logits[i]);
  double sum = 0;
  for (int i = 0; i < vocab; ++i) sum += std::exp(static_cast<double>(logits[i]) - max);
  return max + std::log(sum);
}

StepLogprobs LogprobsOf(const float* logits, int vocab, int chosen, int top) {
  StepLogprobs out;
  if (vocab <= 0) return out;
  const double norm = LogSumExp(logits, vocab);
  auto logprob = [&](int token) { return static_cast<float>(logits[token] - norm); };
  if (chosen >= 0 && chosen < vocab) out.chosen = {chosen, logprob(chosen)};
  top = std::clamp(top, 0, vocab);
  if (top == 0) return out;
  // A bounded min-heap of the best `top` seen so far: one pass, no copy of the vocabulary.
  auto better = [&](int a, int b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  std::vector<int> heap;
  heap.reserve(static_cast<size_t>(top));
  for (int i = 0; i < vocab; ++i) {
    if (static_cast<int>(heap.size()) < top) {
      heap.push_back(i);
      std::push_heap(heap.begin(), heap.end(), better);
    } else if (better(i, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.back() = i;
      std::push_heap(heap.begin(), heap.end(), better);
    }
  }
  std::sort_heap(heap.begin(), heap.end(), better);
  for (int t : heap) out.top.push_back({t, logprob(t)});
  return out;
}

}  // namespace evald::kernels
