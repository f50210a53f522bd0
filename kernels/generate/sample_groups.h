// Samples that have drawn the same tokens so far have the same state: the same keys and values
// at every position and the same next logits (a vector's result does not depend on the batch,
// bit for bit). Such a group is computed as one vector, on its representative's sequence, until
// its samples draw different tokens; then each new group without a computed sequence takes a
// copy of the representative's rows. n samples of a benchmark prompt often open with the same
// tokens (a module header, a code fence), and greedy samples never part.
#pragma once

#include <utility>
#include <vector>

namespace evald::kernels {

// One decode step of the samples still running, as SampleGroups::Next plans it.
struct GroupStep {
  // (from, to): sequence `to` takes sequence `from`'s rows of the positions generated so far
  // before the step runs.
  std::vector<std::pair<int, int>> copies;
  // The sequences the step computes (strictly increasing) and the token each is fed.
  std::vector<int> sequences, tokens;
  // Per sample: the index in `sequences` of the vector whose logits it draws from; -1 when it
  // has finished.
  std::vector<int> vector_of;
};

class SampleGroups {
 public:
  // n samples over one prompt: one group, computed on sequence 0 (whose cache holds the prompt).
  // merge = false: every sample on its own sequence from the start (each step computes them all).
  SampleGroups(int n, bool merge);
  // The step in which sample s (where !done[s]) is fed next[s]: samples of a group that drew
  // the same token stay one group; a group keeps its sequence if its representative is among
  // them, else its first sample's sequence takes a copy of the representative's rows.
  void Next(const std::vector<int>& next, const std::vector<bool>& done, GroupStep* step);

 private:
  bool merge_;
  // Per sample: the sequence that computes it (rep_[rep_[s]] == rep_[s]).
  std::vector<int> rep_;
};

}  // namespace evald::kernels
