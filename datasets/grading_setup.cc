#include "datasets/grading_setup.h"

#include <vector>

#include "base/hash.h"

namespace evald {

std::string GradingSetupSignature(const GradingSetup& setup) {
  const GradingSetup defaults;
  if (setup.pass_signal == defaults.pass_signal && setup.design_module == defaults.design_module &&
      setup.reference_module == defaults.reference_module && setup.data_files.empty() &&
      setup.default_timescale.empty())
    return "";
  std::vector<std::string> fields = {
      "grading-setup", setup.pass_signal == PassSignal::kPassLine ? "pass-line" : "mismatch-count",
      setup.design_module, setup.reference_module, setup.default_timescale};
  for (const auto& [name, content] : setup.data_files) {
    fields.push_back(name);
    fields.push_back(content);
  }
  return Sha256OfFields(std::vector<std::string_view>(fields.begin(), fields.end()));
}

}  // namespace evald
