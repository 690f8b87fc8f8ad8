#pragma once
// The harness's task rules behind a narrow interface for core ("one task validator", issue 24).
// Core has its own kev::Task, so it links a copy of the task rules compiled into another namespace
// (TaskRules.cmake); this header names nothing of either.
#include <string>
#include <string_view>
#include <vector>

namespace kevrules {

// Checks a task document (JSON text) exactly as the harness reads a task file: strict JSON
// (duplicate keys, bad numbers and over-limit documents refused) and then every task rule. Empty
// when the harness would accept it; otherwise the harness's message, naming the field
// ("task.shape.M: 1099511627776 is out of range ...").
std::string checkTaskText(std::string_view text);

// One op of the harness's registry (task_registry.cpp), by name: its dimensions in
// KevolveArgs::dims order, its input and output tensors in the ABI's order. Custom has none (the
// task declares them).
struct OpNames {
    std::string name;
    std::vector<std::string> dims;
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
};
// Every op the harness accepts, in its registry's order.
const std::vector<OpNames>& opNames();

} // namespace kevrules
