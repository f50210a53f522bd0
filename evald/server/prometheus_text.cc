#include "evald/server/prometheus_text.h"

#include <fmt/format.h>

#include <cmath>

namespace evald {

namespace {

// Backslash, double quote and line feed are escaped in label values.
std::string EscapeLabelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// Integers print as integers; other values with enough digits to round-trip.
std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

}  // namespace

void PrometheusText::Counter(const std::string& name, const std::string& help, double value) {
  Family(name, "counter", help, {{{}, value}});
}

void PrometheusText::Gauge(const std::string& name, const std::string& help, double value) {
  Family(name, "gauge", help, {{{}, value}});
}

void PrometheusText::Family(const std::string& name, const std::string& type,
                            const std::string& help,
                            const std::vector<std::pair<Labels, double>>& samples) {
  text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  for (const auto& [labels, value] : samples) {
    text_ += name;
    if (!labels.empty()) {
      text_ += '{';
      for (size_t i = 0; i < labels.size(); ++i)
        text_ += fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].first,
                             EscapeLabelValue(labels[i].second));
      text_ += '}';
    }
    text_ += ' ' + FormatValue(value) + '\n';
  }
}

}  // namespace evald
