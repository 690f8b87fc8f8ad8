// The table of host-side ops: adding an op adds its line here (docs/adding-an-op.md).
#include "ops/op.h"

#include <stdexcept>

namespace kev::ops {

const std::vector<const Op*>& opTable() {
    static const std::vector<const Op*> table = {
        &gemmOp(),   &gemvOp(),        &softmaxOp(), &layernormOp(),
        &reduceOp(), &elementwiseOp(), &rmsnormOp(), &customOp(),
    };
    return table;
}

const Op& opFor(const Task& task) {
    for (const Op* op : opTable()) {
        if (task.op == op->name())
            return *op;
    }
    throw std::logic_error("no host op " + task.op + " in the op table (ops/op_table.cpp)");
}

} // namespace kev::ops
