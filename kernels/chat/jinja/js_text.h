// JavaScript's string and number semantics over UTF-8 text. Chat templates are rendered as
// @huggingface/jinja renders them, and that engine works on JavaScript strings (UTF-16) and
// numbers (doubles): its trim, its length, its number printing and JSON.stringify decide the
// bytes a prompt gets. These functions reproduce exactly those rules for valid UTF-8 input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace evald::kernels::jinja {

// White space as JavaScript's String.prototype.trim knows it (WhiteSpace and LineTerminator).
bool IsJsWhiteSpace(uint32_t code_point);

// The code point starting at `*pos` (advanced past it); U+FFFD for an invalid sequence.
uint32_t DecodeCodePoint(std::string_view text, size_t* pos);
void AppendCodePoint(uint32_t code_point, std::string* out);
std::vector<std::string_view> CodePoints(std::string_view text);  // Array.from(string)

std::string_view JsTrim(std::string_view text);
std::string_view JsTrimStart(std::string_view text);
std::string_view JsTrimEnd(std::string_view text);

bool IsAscii(std::string_view text);
size_t Utf16Length(std::string_view text);  // String.prototype.length
std::u16string ToUtf16(std::string_view text);

// Number.prototype.toString() (shortest round trip, exponent past 1e21 or below 1e-6).
std::string JsNumberToString(double value);
// What @huggingface/jinja prints for a float: one decimal for integral values, else as JS.
std::string JsFloatToString(double value);
// JSON.stringify of a string: quotes, \" \\ \b \f \n \r \t, \u00XX for other controls.
std::string JsonQuote(std::string_view text);
// Every UTF-16 unit from U+007F up written as \uXXXX (tojson's ensure_ascii).
std::string JsonAsciiSafe(std::string_view json);

// Number(string): NaN when the text is not a decimal literal; hex/octal/binary forms are
// reported through `*unsupported` (the caller refuses them rather than guess).
double JsStringToNumber(std::string_view text, bool* unsupported);
double JsParseInt(std::string_view text);    // parseInt(text, 10)
double JsParseFloat(std::string_view text);  // parseFloat(text)

}  // namespace evald::kernels::jinja
