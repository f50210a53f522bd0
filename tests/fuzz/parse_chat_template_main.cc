// libFuzzer target: evald::fuzz::ParseChatTemplate.
#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return evald::fuzz::ParseChatTemplate(data, size);
}
