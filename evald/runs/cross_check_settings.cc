#include "evald/runs/cross_check_settings.h"

#include <string>

namespace evald {

Status ValidateCrossCheckSettings(const v1::CrossCheckSettings& settings) {
  if (settings.bound_cycles() < 0 || settings.bound_cycles() > 1000)
    return Status::InvalidArgument("cross_checks.bound_cycles must be 1..1000 (0: default)");
  if (settings.cpu_seconds() > 600)
    return Status::InvalidArgument("cross_checks.cpu_seconds must be 1..600 (0: default)");
  return Status::Ok();
}

CrossCheckOptions CrossCheckOptionsFrom(const v1::CrossCheckSettings& settings) {
  CrossCheckOptions o;
  o.formal = settings.formal();
  o.formal_failures = settings.formal() && settings.formal_failures();
  o.synthesis = settings.synthesis();
  o.required = !settings.optional();
  if (settings.bound_cycles() > 0) o.formal_options.bound_cycles = settings.bound_cycles();
  if (settings.cpu_seconds() > 0) {
    o.formal_options.cpu_seconds = settings.cpu_seconds();
    o.synthesis_cpu_seconds = settings.cpu_seconds();
  }
  return o;
}

v1::CrossCheckSettings CrossCheckSettingsOf(const CrossCheckOptions& options) {
  v1::CrossCheckSettings s;
  s.set_formal(options.formal);
  s.set_formal_failures(options.formal && options.formal_failures);
  s.set_synthesis(options.synthesis);
  s.set_optional(!options.required);
  if (options.any()) {
    s.set_bound_cycles(options.formal_options.bound_cycles);
    s.set_cpu_seconds(options.formal_options.cpu_seconds);
  }
  return s;
}

CrossCheckOptions DefaultCrossCheckOptions() {
  CrossCheckOptions o;
  o.formal = true;
  o.required = false;
  return o;
}

Status ApplyFormalChoice(std::string_view choice, CrossCheckOptions* options) {
  if (choice == "default") {
    const bool synthesis = options->synthesis;
    *options = DefaultCrossCheckOptions();
    options->synthesis = synthesis;
  } else if (choice == "off") {
    options->formal = options->formal_failures = false;
  } else if (choice == "passes") {
    options->formal = true;
    options->formal_failures = false;
  } else if (choice == "all") {
    options->formal = options->formal_failures = true;
  } else {
    return Status::InvalidArgument("unknown --formal '" + std::string(choice) +
                                   "' (expected off, passes or all)");
    if (choice != "default") options->required = true;
  }
  return Status::Ok();
}

}  // namespace evald
