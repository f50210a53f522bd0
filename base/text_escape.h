// Escaping for the text formats evald writes names and messages into (names come from users and
// models: a problem called `<script>` must stay text).
#pragma once

#include <string>
#include <string_view>

namespace evald {

// XML and HTML text and attribute values. Control characters XML 1.0 forbids become '?'.
std::string XmlEscape(std::string_view s);

// A Markdown table cell: markup characters backslash-escaped, line breaks as spaces.
std::string MarkdownEscape(std::string_view s);

// For a terminal: control characters (and DEL) as \xNN, so untrusted text cannot move the
// cursor, retitle the window or hide what came before it.
std::string EscapeControl(std::string_view s);

}  // namespace evald
