#include "kernels/ops/activations.h"

#include <cmath>

namespace evald::kernels {

void GatedSiluScalar(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

}  // namespace evald::kernels
