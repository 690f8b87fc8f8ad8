#pragma once
// The harness's task rules behind a narrow interface for core ("one task validator", issue 24).
// Core has its own kev::Task, so it links a copy of the task rules compiled into another namespace
// (TaskRules.cmake); this header names nothing of either.
#include <string>
#include <string_view>

namespace kevrules {

// Checks a task document (JSON text) exactly as the harness reads a task file: strict JSON
// (duplicate keys, bad numbers and over-limit documents refused) and then every task rule. Empty
// when the harness would accept it; otherwise the harness's message, naming the field
// ("task.shape.M: 1099511627776 is out of range ...").
std::string checkTaskText(std::string_view text);

} // namespace kevrules
