#include "evald/backends/sse_parser.h"

namespace evald {

bool SseParser::Feed(std::string_view bytes, const OnData& on_data) {
  if (overflowed_) return false;
  while (!bytes.empty()) {
    size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      line_.append(bytes);
      bytes = {};
    } else {
      line_.append(bytes.substr(0, nl));
      bytes.remove_prefix(nl + 1);
      std::string_view line(line_);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      Line(line, on_data);
      line_.clear();
    }
    if (line_.size() + data_.size() > max_event_bytes_) {
      overflowed_ = true;
      return false;
    }
  }
  return true;
}

void SseParser::Line(std::string_view line, const OnData& on_data) {
  if (line.empty()) {
    if (has_data_) on_data(data_);
    data_.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // comment (keep-alive)
  size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field != "data") return;
  if (has_data_) data_ += '\n';
  data_.append(value);
  has_data_ = true;
}

void SseParser::Finish(const OnData& on_data) {
  line_.clear();
  if (has_data_ && !overflowed_) on_data(data_);
  data_.clear();
  has_data_ = false;
}

}  // namespace evald
