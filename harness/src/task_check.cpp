#include "task_check.h"

#include "json.h"
#include "task.h"

namespace kevrules {

std::string checkTaskText(std::string_view text) {
    kev::json::Value value;
    try {
        value = kev::json::parse(text, kev::json::requestLimits());
    } catch (const kev::json::ParseError& e) {
        return std::string("task: not a valid task document: ") + e.what();
    }
    try {
        kev::parseTask(value);
    } catch (const kev::TaskError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("task: ") + e.what();
    }
    return {};
}

const std::vector<OpNames>& opNames() {
    static const std::vector<OpNames> names = [] {
        std::vector<OpNames> out;
        for (const kev::OpSpec& spec : kev::opRegistry())
            out.push_back({spec.name, spec.dims, spec.inputs, spec.outputs});
        return out;
    }();
    return names;
}

} // namespace kevrules
