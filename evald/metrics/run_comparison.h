// Problem-by-problem comparison of two evaluation reports: per-problem pass@k differences,
// mean Δpass@k with a paired bootstrap interval, exact paired tests, and the problems that
// flipped. Problems present in only one report are listed and left out of the statistics.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "evald/proto/compare.pb.h"
#include "evald/proto/eval.pb.h"

namespace evald {

struct CompareOptions {
  std::vector<int> ks = {1, 5};
  double alpha = 0.05;
  std::string label_a = "A";
  std::string label_b = "B";
  int bootstrap_resamples = 10000;  // for the paired intervals
};

// Ok when the two reports grade the same task of the same benchmark. Problems of one name in two
// benchmarks (VerilogEval v1's Human and Machine sets share every name, with other prompts) are
// not the same problem: every comparison refuses such a pair rather than match them by name.
Status SameProblemSet(const v1::EvalReport& a, const v1::EvalReport& b);

v1::Comparison CompareReports(const v1::EvalReport& a, const v1::EvalReport& b,
                              const CompareOptions& options);

// "0.0412", or "n/a" for a negative (not computed) MDE.
std::string FormatMde(double mde);

// The p-value a comparison's verdict on pass@k rests on: the exact permutation test where it was
// computed, else the sign test. -1 when k was not compared.
double DecisiveP(const v1::Comparison& comparison, int k);

}  // namespace evald
