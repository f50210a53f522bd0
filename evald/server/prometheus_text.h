// Prometheus's text exposition format (version 0.0.4): a HELP and a TYPE line per metric family,
// then its samples. Names and help texts are evald's own constants; label values are escaped.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace evald {

class PrometheusText {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  // A family with one unlabelled sample.
  void Counter(const std::string& name, const std::string& help, double value);
  void Gauge(const std::string& name, const std::string& help, double value);
  // A family with one sample per label set.
  void Family(const std::string& name, const std::string& type, const std::string& help,
              const std::vector<std::pair<Labels, double>>& samples);

  const std::string& text() const { return text_; }
  static constexpr const char* kContentType = "text/plain; version=0.0.4";

 private:
  std::string text_;
};

}  // namespace evald
