#pragma once
// Helpers shared by the task reader (task.cpp) and the op registry (task_registry.cpp).
#include "json.h"

#include <string>
#include <vector>

namespace kev::task_detail {

// Throws TaskError "PATH: MESSAGE".
[[noreturn]] void fail(const std::string& path, const std::string& message);

// A value as a message shows it: cut after 60 characters.
std::string quoted(const json::Value& v);

std::string join(const std::vector<std::string>& items, const char* sep);

} // namespace kev::task_detail
