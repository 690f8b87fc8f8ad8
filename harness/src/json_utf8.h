#pragma once
// UTF-8 helpers shared by the JSON writer (json.cpp) and reader (json_parse.cpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kev::json::detail {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one (overlong forms,
// surrogates and code points above U+10FFFF are invalid, as RFC 3629 says).
size_t utf8SequenceLength(std::string_view s, size_t i);

// Appends code point `cp` (at most U+10FFFF) encoded in UTF-8.
void appendUtf8(std::string& out, uint32_t cp);

} // namespace kev::json::detail
