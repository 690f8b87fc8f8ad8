#pragma once
// Whole-file reads and writes shared by the supervisor, the protocol front ends and the caches.
#include <optional>
#include <string>
#include <string_view>

namespace kev::files {

// Writes `data` to `path` (truncating); false on any error.
bool writeFile(const std::string& path, std::string_view data);

// The whole file; nullopt with `error` ("cannot read PATH: reason") when it cannot be read.
std::optional<std::string> readFile(const std::string& path, std::string* error);

} // namespace kev::files
