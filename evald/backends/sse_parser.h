// Incremental parser of a text/event-stream body (the WHATWG server-sent events format that
// OpenAI-compatible servers stream): bytes in, arbitrarily split; the data of each complete
// event out. Only `data:` fields matter here; comments and other fields are skipped.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace evald {

class SseParser {
 public:
  using OnData = std::function<void(std::string_view data)>;

  explicit SseParser(size_t max_event_bytes = 8u << 20) : max_event_bytes_(max_event_bytes) {}

  // Returns false once an event or line outgrows the limit (the stream is then unusable).
  bool Feed(std::string_view bytes, const OnData& on_data);
  // End of the body: an event whose last line ended but lacked the closing blank line is
  // delivered (servers differ); a half line is dropped.
  void Finish(const OnData& on_data);
  bool overflowed() const { return overflowed_; }

 private:
  void Line(std::string_view line, const OnData& on_data);

  size_t max_event_bytes_;
  std::string line_, data_;
  bool has_data_ = false;
  bool overflowed_ = false;
};

}  // namespace evald
