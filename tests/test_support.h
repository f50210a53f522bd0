// Shared helpers for the tests: paths and small builders.
#pragma once

#include <string>

#include "base/file_io.h"

namespace evald::testing {

inline std::string SourceDir() {
  return EVALD_SOURCE_DIR;
}
inline std::string SharedVerilogEval() {
  return std::string(EVALD_SHARED_DIR) + "/verilog-eval";
}
inline bool HaveSharedVerilogEval() {
  return IsDirectory(SharedVerilogEval() + "/dataset_spec-to-rtl");
}
inline std::string BuiltinDataset() {
  return SourceDir() + "/datasets/builtin";
}

}  // namespace evald::testing
