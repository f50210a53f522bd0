// libFuzzer target: evald::fuzz::RenderChatTemplate.
#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return evald::fuzz::RenderChatTemplate(data, size);
}
