// UTF-8 hygiene for text that crosses a boundary: model output (byte-fallback tokens can produce
// any byte sequence) must become valid UTF-8 before it is stored in a protobuf string or written
// as JSON, and a stream must not cut a character in two.
#pragma once

#include <string>
#include <string_view>

namespace evald {

// `text` with every invalid or truncated sequence replaced by U+FFFD.
std::string SanitizeUtf8(std::string_view text);

// The largest length <= limit at which `text` can be cut without splitting a character that
// is complete in `text` (an incomplete trailing sequence is held back).
size_t Utf8SafeCut(std::string_view text, size_t limit);

}  // namespace evald
