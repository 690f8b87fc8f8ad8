// Times the host side of one validation trial of each timed task beyond GEMM: input generation, the
// fp64 truth and the comparison of two outputs (candidate and reference, here the truth rounded to
// the output dtype). Not a test: a measurement to run by hand on a Release build,
//   KEVOLVE_HOST_THREADS=16 ops_host_bench [task.json ...]
// (default: every timed task of resources/tasks/ beyond GEMM).
#include "json.h"
#include "ops/ops.h"
#include "task.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

kev::Task load(const std::string& path) {
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error("cannot read " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return kev::parseTask(kev::json::parse(ss.str()));
}

void bench(const std::string& path) {
    const kev::Task task = load(path);
    std::vector<kev::ops::HostTensor> inputs;
    auto t0 = Clock::now();
    kev::ops::generate(task, task.shape, kev::ops::Distribution::Normal, 1, inputs);
    const double generate = since(t0);
    t0 = Clock::now();
    const kev::ops::Truth truth = kev::ops::computeTruth(task, task.shape, inputs);
    const double truthS = since(t0);
    std::vector<kev::ops::HostTensor> out = kev::ops::allocateOutputs(task, task.shape);
    for (size_t o = 0; o < out.size(); ++o) {
        for (int64_t i = 0; i < out[o].layout.elements(); ++i)
            out[o].set(i, truth[o][static_cast<size_t>(i)]);
    }
    t0 = Clock::now();
    const kev::ops::Check check = kev::ops::compare(task, task.shape, inputs, truth, out, out);
    const double compare = since(t0);
    double edges = 0;
    for (const kev::ops::EdgeCase& e : kev::ops::edgeCases(task, task.shape)) {
        t0 = Clock::now();
        e.generate(2, inputs);
        edges += since(t0);
    }
    std::printf("%-34s generate %7.3f s  truth %7.3f s  compare %7.3f s  edge inputs %7.3f s  "
                "(%s, rel_fro %.3g)\n",
                task.name.c_str(), generate, truthS, compare, edges,
                check.verdict.pass ? "pass" : "FAIL", check.candidate.relFro);
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> paths;
    for (int i = 1; i < argc; ++i)
        paths.emplace_back(argv[i]);
    if (paths.empty()) {
        for (const char* name :
             {"softmax_f32_8192", "softmax_f16_8192", "layernorm_bf16_16384x4096",
              "layernorm_f32_16384x4096", "reduce_sum_f32_16384x8192", "reduce_max_f32_16384x8192",
              "gemv_f16_16384", "gemv_f16_16384_transposed", "gemv_f32_8192",
              "elementwise_gelu_f16_64M"})
            paths.push_back(std::string(KEVOLVE_SOURCE_DIR) + "/resources/tasks/" + name + ".json");
    }
    try {
        for (const std::string& p : paths)
            bench(p);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ops_host_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
