#include "kernels/ops/activations.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace evald::kernels {

float SoftmaxWeightsScalar(const float* x, float* y, int64_t n, float scale) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) m = std::max(m, x[i]);  // a NaN x compares false: left out
  for (int64_t i = 0; i < n; ++i) y[i] = std::isnan(x[i]) ? 0.0f : std::exp((x[i] - m) * scale);
  return m;
}

void RmsNormScalar(const float* x, const float* w, float* out, int64_t n, float eps) {
  double lanes[16] = {};
  for (int64_t i = 0; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) lanes[j] += static_cast<double>(x[i + j] * x[i + j]);
  const float scale = RmsNormScale(lanes, x, n, eps);
  if (w) {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale * w[i];
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale;
  }
}

void GatedSiluScalar(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

}  // namespace evald::kernels
