#include "compile.h"

#include "temp_dir.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace {

// A captured `nvcc -Xptxas -v` log (CUDA 13.0) with an entry that spills nothing, one with a stack
// frame and a barrier, and a non-entry function whose properties must not become a kernel.
const char* kPtxasLog = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z2k2ILi3EEvPf' for 'sm_90a'
ptxas info    : Function properties for _Z2k2ILi3EEvPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 2.397 ms
ptxas info    : Compiling entry function '_Z2k1Pfi' for 'sm_90a'
ptxas info    : Function properties for _Z2k1Pfi
    256 bytes stack frame, 16 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 256 bytes cumulative stack size, 1024 bytes smem
ptxas info    : Compile time = 5.929 ms
ptxas info    : Function properties for _Z6helperf
    64 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
)";

// The older format (CUDA 12.0-12.3) has no barrier count and puts cmem on the registers line.
const char* kOldPtxasLog =
    R"(ptxas info    : Compiling entry function '_Z4gemmPK6__halfS1_Pfiii' for 'sm_80'
ptxas info    : Function properties for _Z4gemmPK6__halfS1_Pfiii
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, 49152 bytes smem, 388 bytes cmem[0]
)";

} // namespace

TEST(Compile, ParsesPtxasResources) {
    const auto kernels = kev::compile::parsePtxasLog(kPtxasLog);
    ASSERT_EQ(kernels.size(), 2u);
    EXPECT_EQ(kernels[0].name, "_Z2k2ILi3EEvPf");
    EXPECT_EQ(kernels[0].registers, 8);
    EXPECT_EQ(kernels[0].stackBytes, 0);
    EXPECT_EQ(kernels[0].barriers, 0);
    EXPECT_EQ(kernels[1].name, "_Z2k1Pfi");
    EXPECT_EQ(kernels[1].registers, 40);
    EXPECT_EQ(kernels[1].stackBytes, 256);
    EXPECT_EQ(kernels[1].spillStoreBytes, 16);
    EXPECT_EQ(kernels[1].spillLoadBytes, 12);
    EXPECT_EQ(kernels[1].sharedStaticBytes, 1024);
    EXPECT_EQ(kernels[1].barriers, 1);

    const auto old = kev::compile::parsePtxasLog(kOldPtxasLog);
    ASSERT_EQ(old.size(), 1u);
    EXPECT_EQ(old[0].registers, 168);
    EXPECT_EQ(old[0].sharedStaticBytes, 49152);
    EXPECT_EQ(old[0].barriers, 0);
    EXPECT_TRUE(kev::compile::parsePtxasLog("").empty());
}

TEST(Compile, ArchSelection) {
    ::unsetenv("KEVOLVE_ARCH");
    EXPECT_EQ(kev::compile::archFor(9, 0, ""), "90a");
    EXPECT_EQ(kev::compile::archFor(8, 6, ""), "86");
    EXPECT_EQ(kev::compile::archFor(10, 0, ""), "100");
    EXPECT_EQ(kev::compile::archFor(0, 0, ""), "90a");
    EXPECT_EQ(kev::compile::archFor(9, 0, "sm_80"), "80");
    EXPECT_EQ(kev::compile::archFor(9, 0, "compute_90a"), "90a");
    EXPECT_THROW(kev::compile::archFor(9, 0, "hopper"), std::invalid_argument);
    ::setenv("KEVOLVE_ARCH", "sm_89", 1);
    EXPECT_EQ(kev::compile::archFor(9, 0, ""), "89");
    EXPECT_EQ(kev::compile::archFor(9, 0, "75"), "75");
    ::unsetenv("KEVOLVE_ARCH");
}

TEST(Compile, CommandIsTheDocumentedOne) {
    kev::compile::Options o;
    o.source = "/w/cand.cu";
    o.output = "/w/cand.so";
    o.arch = "90a";
    o.nvcc = "/cuda/bin/nvcc";
    o.includeDir = "/inc";
    const std::vector<std::string> expected = {"/cuda/bin/nvcc",
                                               "-shared",
                                               "-cudart",
                                               "shared",
                                               "-Xcompiler",
                                               "-fPIC",
                                               "-Xcompiler",
                                               "-fvisibility=hidden",
                                               "-O3",
                                               "-std=c++17",
                                               "-lineinfo",
                                               "-Xptxas",
                                               "-v",
                                               "-gencode=arch=compute_90a,code=sm_90a",
                                               "-I/inc",
                                               "-o",
                                               "/w/cand.so",
                                               "/w/cand.cu"};
    EXPECT_EQ(kev::compile::command(o), expected);
    o.guardExe = "/bin/kevolve-harness";
    const auto s = kev::compile::spec(o);
    ASSERT_GE(s.argv.size(), 4u);
    EXPECT_EQ(s.argv[0], "/bin/kevolve-harness");
    EXPECT_EQ(s.argv[1], "exec-guard");
    EXPECT_EQ(s.argv[2], "--");
    EXPECT_EQ(s.argv[3], "/cuda/bin/nvcc");
    EXPECT_EQ(s.cwd, "/w");
}

TEST(Compile, FindsToolsOfThisBuild) {
    EXPECT_FALSE(kev::compile::findNvcc().empty());
    EXPECT_TRUE(fs::exists(kev::compile::findIncludeDir() + "/kevolve/abi.h"));
}

TEST(Compile, SyntaxErrorComesBackVerbatim) {
    const kev::test::TempDir tmp("kev_compile_syntax");
    const fs::path& dir = tmp.path();
    std::ofstream(dir / "cand.cu") << "#include <kevolve/abi.h>\nint broken = ;\n";
    kev::compile::Options o;
    o.source = (dir / "cand.cu").string();
    o.output = (dir / "cand.so").string();
    const auto r = kev::compile::compile(o);
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(r.timedOut);
    EXPECT_EQ(r.error.rfind("nvcc exited with code ", 0), 0u) << r.error << "\n" << r.log;
    EXPECT_NE(r.log.find("cand.cu(2): error: expected an expression"), std::string::npos) << r.log;

    // Verbatim: exactly what nvcc prints when run by hand with the same command.
    kev::process::Spec direct;
    direct.argv = r.command;
    direct.mergeStderr = true;
    direct.cwd = dir.string();
    direct.env.emplace_back("TMPDIR", dir.string());
    EXPECT_EQ(kev::process::run(direct).out, r.log);
}

TEST(Compile, CleanKernelCompilesWithResources) {
    const kev::test::TempDir tmp("kev_compile_clean");
    const fs::path& dir = tmp.path();
    std::ofstream(dir / "cand.cu") << R"(#include <kevolve/abi.h>
__global__ void scale(float* p, int n) {
    __shared__ float s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? p[i] : 0.f;
    __syncthreads();
    if (i < n) p[i] = 2.f * s[threadIdx.x];
}
extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* a, cudaStream_t stream) {
    scale<<<1, 128, 0, stream>>>(static_cast<float*>(a->outputs[0].data), 128);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";
    kev::compile::Options o;
    o.source = (dir / "cand.cu").string();
    o.output = (dir / "cand.so").string();
    o.arch = "90a";
    const auto r = kev::compile::compile(o);
    ASSERT_TRUE(r.ok) << r.error << "\n" << r.log;
    EXPECT_TRUE(fs::exists(dir / "cand.so"));
    ASSERT_EQ(r.kernels.size(), 1u) << r.log;
    EXPECT_EQ(r.kernels[0].name, "_Z5scalePfi");
    EXPECT_GT(r.kernels[0].registers, 0);
    EXPECT_EQ(r.kernels[0].sharedStaticBytes, 512);
    EXPECT_EQ(r.kernels[0].barriers, 1);
    const auto j = kev::compile::toJson(r);
    EXPECT_TRUE(j.find("ok")->asBool());
    EXPECT_EQ(j.find("kernels")->at(0).find("shared_static_bytes")->asInt(), 512);
    EXPECT_GT(r.seconds, 0.0);
    EXPECT_FALSE(kev::compile::nvccVersion(r.command[0]).empty());
}

TEST(Compile, TimeoutKillsNvcc) {
    const kev::test::TempDir tmp("kev_compile_timeout");
    const fs::path& dir = tmp.path();
    std::ofstream(dir / "cand.cu") << "#include <kevolve/abi.h>\n";
    kev::compile::Options o;
    o.source = (dir / "cand.cu").string();
    o.output = (dir / "cand.so").string();
    o.timeoutS = 0.05;
    const auto r = kev::compile::compile(o);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(r.timedOut);
    EXPECT_EQ(r.error, "nvcc did not finish within 0.05 s");
}

TEST(Compile, LogIsTrimmedKeepingHeadAndTail) {
    kev::compile::Options o;
    o.output = "/nonexistent/cand.so";
    kev::process::Result run;
    run.started = true;
    run.exited = true;
    run.exitCode = 1;
    run.out = "FIRST\n" + std::string(200000, 'x') + "\nLAST\n";
    const auto r = kev::compile::finish(o, run);
    EXPECT_LE(r.log.size(), kev::compile::kMaxLog + 64);
    EXPECT_EQ(r.log.substr(0, 6), "FIRST\n");
    EXPECT_EQ(r.log.substr(r.log.size() - 5), "LAST\n");
    EXPECT_NE(r.log.find("bytes omitted"), std::string::npos);
}
