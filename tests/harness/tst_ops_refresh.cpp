// The per-sample refresh of the timed inputs of the ops beyond GEMM: rotating the planned input by
// k must rotate every output's truth by k exactly (so the GPU child can check a rotated sample
// against the truth it already holds), along the planned axis only, and the shifts of a set must
// not repeat.
#include "ops/ops.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace json = kev::json;
namespace ops = kev::ops;
using kev::Task;
using ops::HostTensor;

namespace {

Task makeTask(const std::string& op, const std::string& dtypes, const std::string& shape,
              const std::string& params = "{}") {
    return kev::parseTask(json::parse(R"({"name":"t","op":")" + op + R"(","dtypes":)" + dtypes +
                                      R"(,"shape":)" + shape + R"(,"params":)" + params + "}"));
}

std::vector<Task> tasks() {
    return {
        makeTask("softmax", R"({"X":"f16","Y":"f16"})", R"({"M":37,"N":100})"),
        makeTask("layernorm", R"({"X":"bf16","W":"bf16","B":"bf16","Y":"bf16"})",
                 R"({"M":29,"N":96})"),
        makeTask("reduce", R"({"X":"f32","Y":"f32"})", R"({"M":41,"N":77})",
                 R"({"reduction":"sum"})"),
        makeTask("reduce", R"({"X":"f16","Y":"f32"})", R"({"M":41,"N":77})",
                 R"({"reduction":"max"})"),
        makeTask("gemv", R"({"A":"f16","x":"f16","y":"f16"})", R"({"M":31,"N":45})",
                 R"({"transpose":false})"),
        makeTask("gemv", R"({"A":"f16","x":"f16","y":"f32"})", R"({"M":31,"N":45})",
                 R"({"transpose":true})"),
        makeTask("elementwise", R"({"X":"f16","Y":"f16"})", R"({"N":1001})",
                 R"({"function":"gelu"})"),
    };
}

// `t` rotated by k along its rows or columns, as the GPU child's device copies do.
void rotate(HostTensor& t, bool columns, int64_t k) {
    const HostTensor old = t;
    const int64_t rows = t.layout.rows;
    const int64_t cols = t.layout.cols;
    std::vector<double> row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
        old.load(columns ? r : (r + k) % rows, 0, cols, row.data());
        if (columns) {
            std::vector<double> turned(row.size());
            for (int64_t c = 0; c < cols; ++c)
                turned[static_cast<size_t>(c)] = row[static_cast<size_t>((c + k) % cols)];
            row = turned;
        }
        t.store(r, 0, cols, row.data());
    }
}

// Whether `turned` is `truth` rotated by k along each output's rows (rank 2) or elements (rank 1),
// bit for bit.
bool isRotation(const Task& t, const ops::Truth& truth, const ops::Truth& turned, int64_t k) {
    std::vector<ops::TensorLayout> outputs;
    for (const auto& l : ops::tensorLayouts(t, t.shape)) {
        if (l.output)
            outputs.push_back(l);
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
        const int64_t rows = outputs[o].rank() == 1 ? 1 : outputs[o].rows;
        const int64_t cols = outputs[o].cols;
        for (int64_t r = 0; r < rows; ++r) {
            for (int64_t c = 0; c < cols; ++c) {
                const int64_t from = rows > 1 ? ((r + k) % rows) * cols + c : (c + k) % cols;
                const double a = turned[o][static_cast<size_t>(r * cols + c)];
                const double b = truth[o][static_cast<size_t>(from)];
                if (std::memcmp(&a, &b, sizeof a) != 0)
                    return false;
            }
        }
    }
    return true;
}

} // namespace

TEST(OpsRefresh, RotatingThePlannedInputRotatesTheTruth) {
    for (const Task& t : tasks()) {
        SCOPED_TRACE(t.op + (t.op == "gemv" && t.param("transpose").flag ? " transposed" : ""));
        const ops::SampleRotation plan = ops::sampleRotation(t, t.shape);
        ASSERT_EQ(plan.input, 0);
        ASSERT_GT(plan.extent, 1);
        std::vector<HostTensor> in;
        ops::generate(t, t.shape, ops::Distribution::Normal, 3, in);
        const ops::Truth truth = ops::computeTruth(t, t.shape, in);
        for (int64_t k : {int64_t{1}, plan.extent / 2, plan.extent - 1}) {
            std::vector<HostTensor> turned = in;
            rotate(turned[0], plan.columns, k);
            EXPECT_TRUE(isRotation(t, truth, ops::computeTruth(t, t.shape, turned), k)) << k;
            EXPECT_FALSE(isRotation(t, truth, ops::computeTruth(t, t.shape, turned), 0))
                << "the rotated sample's correct output differs from the unrotated one";
        }
    }
}

TEST(OpsRefresh, TheOtherAxisWouldNotDo) {
    // A transposed GEMV's y follows A's columns; rotating A's rows changes y unpredictably, and
    // so does rotating the columns of an untransposed one.
    for (const Task& t : tasks()) {
        if (t.op != "gemv")
            continue;
        const ops::SampleRotation plan = ops::sampleRotation(t, t.shape);
        std::vector<HostTensor> in;
        ops::generate(t, t.shape, ops::Distribution::Normal, 4, in);
        const ops::Truth truth = ops::computeTruth(t, t.shape, in);
        std::vector<HostTensor> wrong = in;
        rotate(wrong[0], !plan.columns, 1);
        const ops::Truth turned = ops::computeTruth(t, t.shape, wrong);
        for (int64_t k = 0; k < static_cast<int64_t>(truth[0].size()); ++k)
            EXPECT_FALSE(isRotation(t, truth, turned, k)) << k;
    }
}

TEST(OpsRefresh, OneRowOrGemmHasNothingToRotate) {
    const Task one = makeTask("softmax", R"({"X":"f32","Y":"f32"})", R"({"M":1,"N":100})");
    EXPECT_LT(ops::sampleRotation(one, one.shape).extent, 2);
    const Task gemm =
        makeTask("gemm", R"({"A":"f16","B":"f16","C":"f32"})", R"({"M":64,"N":64,"K":64})");
    EXPECT_EQ(ops::sampleRotation(gemm, gemm.shape).extent, 0);
}

TEST(OpsRefresh, ShiftsOfASetDoNotRepeat) {
    for (int64_t extent : {2, 3, 97, 1000, 3080, 8192, 16384}) {
        for (uint64_t seed : {0ull, 1ull, 0x5e7ull, 123456789ull}) {
            const int64_t stride = ops::rotationStride(seed, extent);
            std::set<int64_t> seen;
            for (int64_t j = 1; j < extent; ++j) {
                const int64_t k = ops::rotationShift(j, stride, extent);
                ASSERT_GT(k, 0) << extent << " " << seed << " " << j;
                ASSERT_LT(k, extent);
                ASSERT_TRUE(seen.insert(k).second) << "shift " << k << " again at sample " << j;
            }
        }
    }
}
