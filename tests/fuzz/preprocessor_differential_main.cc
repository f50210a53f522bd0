// libFuzzer target: evald::fuzz::PreprocessorDifferential (runs the real preprocessors).
#include "tests/fuzz/preprocessor_differential.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return evald::fuzz::PreprocessorDifferential(data, size);
}
