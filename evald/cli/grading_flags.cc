#include "evald/cli/grading_flags.h"

#include "evald/runs/grading_settings.h"

namespace evald {

void AddGradingFlags(CLI::App* cmd, GradingFlagValues* values) {
  for (const GradingFlag& flag : GradingFlags()) {
    const std::string name = flag.name;
    if (flag.is_switch) {
      cmd->add_flag_callback(
          name, [values, name] { values->given[name] = "true"; }, flag.help);
    } else {
      cmd->add_option_function<std::string>(
          name, [values, name](const std::string& v) { values->given[name] = v; }, flag.help);
    }
  }
}

StatusOr<v1::GradingSettings> GradingSettingsOf(const GradingFlagValues& values) {
  v1::GradingSettings settings;
  for (const GradingFlag& flag : GradingFlags()) {  // in the table's order, whatever was typed
    auto it = values.given.find(flag.name);
    if (it != values.given.end()) EVALD_RETURN_IF_ERROR(flag.apply(it->second, &settings));
  }
  EVALD_RETURN_IF_ERROR(NormalizeGradingSettings(&settings));
  return settings;
}

}  // namespace evald
