#include "compile.h"
#include "elf_code.h"
#include "elf_lint.h"

#include "temp_dir.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <poll.h>

namespace fs = std::filesystem;

namespace {

const char* kPrelude = R"(#include <kevolve/abi.h>
__global__ void fill(float* p) { p[threadIdx.x] = 1.f; }
)";

const char* kLaunch = R"(
extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* a, cudaStream_t s) {
    fill<<<1, 32, 0, s>>>(static_cast<float*>(a->outputs[0].data));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";

// Each snippet becomes one shared object, compiled with the harness's own command.
const std::map<std::string, std::string>& snippets() {
    static const std::map<std::string, std::string> s = {
        {"clean", std::string(kPrelude) + R"(
#include <cmath>
#include <cstring>
__device__ float twice(float x) { return 2.f * x; }               // host stub calls exit()
__device__ __noinline__ float thrice(float x) { return 3.f * x; } // likewise
__global__ void big(float* p) { extern __shared__ float s[]; s[0] = twice(thrice(p[0])); p[0] = s[0]; }
extern "C" KEVOLVE_EXPORT uint64_t kevolve_workspace_bytes(const KevolveArgs*) { return 0; }
extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* a, cudaStream_t s) {
    KevolveArgs copy;
    std::memcpy(&copy, a, sizeof copy);
    int blocks = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(copy.dims[0]))));
    cudaFuncSetAttribute(big, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
    big<<<blocks, 32, 200 * 1024, s>>>(static_cast<float*>(a->outputs[0].data));
    fill<<<1, 32, 0, s>>>(static_cast<float*>(a->outputs[0].data));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)"},
        {"calls", std::string(kPrelude) + R"(
#include <cublas_v2.h>
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <unistd.h>
static void* worker(void*) { return nullptr; }
extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* a, cudaStream_t s) {
    if (a->dims[0] == 1) cublasGemmEx(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, nullptr, nullptr,
        CUDA_R_16F, 1, nullptr, CUDA_R_16F, 1, nullptr, nullptr, CUDA_R_32F, 1,
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (a->dims[0] == 2) fork();
    if (a->dims[0] == 3) fopen("/etc/passwd", "r");
    if (a->dims[0] == 4) { pthread_t t; pthread_create(&t, nullptr, worker, nullptr); }
    if (a->dims[0] == 5 && getenv("X")) return 1;
    if (a->dims[0] == 6) exit(0);
    fill<<<1, 32, 0, s>>>(static_cast<float*>(a->outputs[0].data));
    return 0;
}
)"},
        {"exports", std::string(kPrelude) + R"(
// The runtime headers declare cudaMalloc already: define the symbol under another C++ name.
extern "C" KEVOLVE_EXPORT int fakeMalloc(void** p, size_t) __asm__("cudaMalloc");
extern "C" KEVOLVE_EXPORT int fakeMalloc(void** p, size_t) { *p = nullptr; return 0; }
)" + kLaunch},
        {"ctor", std::string(kPrelude) + R"(
#include <cstdlib>
__attribute__((constructor)) static void early() { setenv("X", "1", 1); }
)" + kLaunch},
        {"global_string", std::string(kPrelude) + R"(
#include <string>
std::string g_name = "a string long enough to need the heap, really";
)" + kLaunch},
        // Load-time code (THREAT_MODEL.md class 5): each must be refused by load_time_code.
        {"init_section", std::string(kPrelude) + R"(
asm(".section .init,\"ax\",@progbits\n\tmovl $1, %eax\n\t.previous");
)" + kLaunch},
        {"ifunc", std::string(kPrelude) + R"(
static int impl() { return 0; }
extern "C" { static void* resolveIt() { return reinterpret_cast<void*>(&impl); } }
extern "C" int picked() __attribute__((ifunc("resolveIt")));
extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* a, cudaStream_t s) {
    fill<<<1, 32, 0, s>>>(static_cast<float*>(a->outputs[0].data));
    return picked();
}
)"},
        {"dtor", std::string(kPrelude) + R"(
__attribute__((destructor)) static void bye() { static volatile int x; x = 1; }
)" + kLaunch},
        {"tls_init", std::string(kPrelude) + R"(
struct T { int v; T() : v(3) {} };
thread_local T t;
extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* a, cudaStream_t s) {
    fill<<<1, 32, 0, s>>>(static_cast<float*>(a->outputs[0].data));
    return t.v - 3;
}
)"},
        {"gmon_hook", std::string(kPrelude) + R"(
extern "C" void __gmon_start__() { static volatile int x; x = 1; }
)" + kLaunch},
        {"nvcc_named_ctor", std::string(kPrelude) + R"(
__attribute__((constructor)) static void __nv_early() { static volatile int x; x = 1; }
)" + kLaunch},
        {"asm_init_array", std::string(kPrelude) + R"(
asm(".section .init_array,\"aw\"\n\t.quad kevolve_launch\n\t.previous");
)" + kLaunch},
        // What nvcc legitimately emits at load, in many forms: registration of several kernels,
        // templates, __constant__, __device__ and __managed__ variables, plain thread_local data,
        // and unoptimised host code (its registration helpers are not inlined).
        {"rich_registration", std::string(R"(#pragma GCC optimize("O0")
#include <kevolve/abi.h>
__constant__ float c_scale[4];
__device__ float d_acc;
__managed__ int m_count;
thread_local int t_calls = 0;
template <int N> __global__ void scaled(float* p) { p[threadIdx.x] = c_scale[N % 4] + d_acc; }
__global__ void other(float* p) { p[0] = static_cast<float>(m_count); }
extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* a, cudaStream_t s) {
    ++t_calls;
    float* out = static_cast<float*>(a->outputs[0].data);
    scaled<1><<<1, 32, 0, s>>>(out);
    scaled<2><<<1, 32, 0, s>>>(out);
    other<<<1, 1, 0, s>>>(out);
    return 0;
}
)")},
        // Kernels in an anonymous namespace whose signatures name __nv_bfloat16: their host
        // stubs' mangled names contain "__nv_", yet they are registration keys, not load-time
        // code (the built-in bf16 families generate exactly this; it was refused once).
        {"bf16_stub", std::string(R"(#include <kevolve/abi.h>
#include <cuda_bf16.h>
namespace {
__global__ void scaleRows(const __nv_bfloat16* x, __nv_bfloat16* y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
}
extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* a, cudaStream_t s) {
    scaleRows<<<1, 32, 0, s>>>(static_cast<const __nv_bfloat16*>(a->inputs[0].data),
                               static_cast<__nv_bfloat16*>(a->outputs[0].data), 32);
    return 0;
}
)")},
        {"no_entry", std::string(kPrelude) + R"(
int kevolve_launch(const KevolveArgs* a, cudaStream_t s) { fill<<<1, 32, 0, s>>>(nullptr); return a ? 0 : 1; }
)"},
    };
    return s;
}

class Lint : public ::testing::Test {
protected:
    static void TearDownTestSuite() {
        std::error_code ec;
        fs::remove_all(s_dir, ec);
    }

    static void SetUpTestSuite() {
        s_dir = fs::temp_directory_path() / ("kev_lint_test_" + std::to_string(::getpid()));
        fs::remove_all(s_dir);
        fs::create_directories(s_dir);
        // nvcc costs seconds per object: compile them all at once.
        std::vector<std::unique_ptr<kev::process::Process>> running;
        for (const auto& [name, source] : snippets()) {
            std::ofstream(s_dir / (name + ".cu")) << source;
            kev::compile::Options o;
            o.source = (s_dir / (name + ".cu")).string();
            o.output = (s_dir / (name + ".so")).string();
            o.arch = "90a";
            o.nvcc = kev::compile::findNvcc();
            o.includeDir = kev::compile::findIncludeDir();
            o.timeoutS = 300;
            auto spec = kev::compile::spec(o);
            spec.cwd.clear(); // each object in the same directory: keep nvcc's temp files apart
            spec.env.clear();
            running.push_back(std::make_unique<kev::process::Process>(spec));
            running.back()->start();
        }
        for (bool busy = true; busy;) {
            busy = false;
            std::vector<pollfd> fds;
            for (auto& p : running) {
                if (!p->service()) {
                    busy = true;
                    for (int fd : p->openFds())
                        fds.push_back({fd, POLLIN, 0});
                }
            }
            if (busy)
                ::poll(fds.data(), fds.size(), 50);
        }
        for (auto& p : running)
            s_logs += p->result().out;
    }

    static kev::lint::LintResult lint(const std::string& name) {
        const fs::path so = s_dir / (name + ".so");
        EXPECT_TRUE(fs::exists(so)) << name << " did not compile:\n" << s_logs;
        return kev::lint::lintObject(so.string());
    }

    static bool violationNames(const kev::lint::LintResult& r, const std::string& text) {
        for (const auto& v : r.violations) {
            if (v.find(text) != std::string::npos)
                return true;
        }
        return false;
    }

    static fs::path s_dir;
    static std::string s_logs;
};

fs::path Lint::s_dir;
std::string Lint::s_logs;

std::string describe(const kev::lint::LintResult& r) {
    std::string s = r.error + "\n";
    for (const auto& c : r.checks)
        s += c.name + (c.ok ? " ok: " : " FAIL: ") + c.evidence + "\n";
    for (const auto& v : r.violations)
        s += "violation: " + v + "\n";
    return s;
}

} // namespace

TEST_F(Lint, CleanObjectPasses) {
    const auto r = lint("clean");
    EXPECT_TRUE(r.ok) << describe(r);
    EXPECT_TRUE(r.violations.empty()) << describe(r);
    ASSERT_EQ(r.checks.size(), 4u);
    EXPECT_EQ(r.checks[0].name, "undefined_symbols");
    EXPECT_EQ(r.checks[1].name, "exported_symbols");
    EXPECT_EQ(r.checks[2].name, "static_constructors");
    EXPECT_EQ(r.checks[3].name, "load_time_code");
    EXPECT_NE(r.checks[3].evidence.find("DT_INIT crt .init"), std::string::npos)
        << r.checks[3].evidence;
    for (const auto& c : r.checks)
        EXPECT_TRUE(c.ok) << c.name << ": " << c.evidence;
    EXPECT_NE(r.checks[0].evidence.find("__cudaRegisterFatBinary"), std::string::npos);
    EXPECT_NE(r.checks[0].evidence.find("exit@GLIBC"), std::string::npos)
        << "the __device__ host stubs' exit is the case this test guards";
    EXPECT_NE(r.checks[1].evidence.find("kevolve_launch"), std::string::npos);
    EXPECT_NE(r.checks[1].evidence.find("kevolve_workspace_bytes"), std::string::npos);
    EXPECT_NE(r.checks[2].evidence.find("_ZL24__sti____cudaRegisterAllv"), std::string::npos);
}

TEST_F(Lint, ForbiddenCallsAreNamed) {
    const auto r = lint("calls");
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(r.checks[0].ok);
    for (const char* sym : {"cublasGemmEx", "fork", "fopen", "pthread_create", "getenv", "exit"})
        EXPECT_TRUE(violationNames(r, std::string("undefined symbol ") + sym)) << sym << "\n"
                                                                               << describe(r);
    EXPECT_TRUE(violationNames(r, "fork@GLIBC_2.2.5 (from libc.so.6) is not allowed"))
        << describe(r);
}

TEST_F(Lint, ExportedRuntimeFunctionIsNamed) {
    const auto r = lint("exports");
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(r.checks[1].ok);
    EXPECT_TRUE(violationNames(r, "exports cudaMalloc")) << describe(r);
}

TEST_F(Lint, ConstructorAttributeIsNamed) {
    const auto r = lint("ctor");
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(r.checks[2].ok);
    EXPECT_TRUE(violationNames(r, "static constructor _ZL5earlyv")) << describe(r);
    EXPECT_TRUE(violationNames(r, "undefined symbol setenv")) << describe(r);
}

TEST_F(Lint, GlobalStringIsAStaticConstructor) {
    const auto r = lint("global_string");
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(r.checks[2].ok) << describe(r);
    EXPECT_TRUE(violationNames(r, "static constructor _GLOBAL__sub_I_")) << describe(r);
}

TEST_F(Lint, LegitimateRegistrationPasses) {
    const auto r = lint("rich_registration");
    EXPECT_TRUE(r.ok) << describe(r);
    EXPECT_NE(r.checks[3].evidence.find("_ZL24__sti____cudaRegisterAllv"), std::string::npos)
        << describe(r);
    EXPECT_NE(r.checks[3].evidence.find("PT_TLS"), std::string::npos) << describe(r);
}

TEST_F(Lint, Bf16KernelStubsAreNotLoadTimeCode) {
    const auto r = lint("bf16_stub");
    EXPECT_TRUE(r.ok) << describe(r);
}

TEST_F(Lint, LoadTimeCodeIsNamed) {
    const std::pair<const char*, const char*> cases[] = {
        {"init_section", "load-time code: DT_INIT: .init holds"},
        {"ifunc", "load-time code: IFUNC symbol picked"},
        {"ifunc", "load-time code: relocation IRELATIVE"},
        {"dtor", "load-time code: DT_FINI_ARRAY entry _ZL3byev"},
        {"tls_init", "load-time code: thread_local with dynamic initialisation (__tls_init)"},
        {"gmon_hook", "load-time code: defines __gmon_start__"},
        {"nvcc_named_ctor", "load-time code: DT_INIT_ARRAY entry _ZL10__nv_earlyv"},
        {"asm_init_array", "load-time code: DT_INIT_ARRAY entry kevolve_launch"},
    };
    for (const auto& [name, violation] : cases) {
        const auto r = lint(name);
        EXPECT_FALSE(r.ok) << name;
        EXPECT_FALSE(r.checks.at(3).ok) << name << "\n" << describe(r);
        EXPECT_TRUE(violationNames(r, violation)) << name << ": " << violation << "\n"
                                                  << describe(r);
    }
}

TEST_F(Lint, MissingEntryPointIsAViolation) {
    const auto r = lint("no_entry");
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(violationNames(r, "kevolve_launch is not exported")) << describe(r);
}

TEST(LintElf, GarbageIsReportedNotCrashed) {
    const kev::test::TempDir tmp("kev_lint_garbage");
    const fs::path p = tmp / "garbage.so";
    std::ofstream(p) << "this is not an ELF file";
    const auto r = kev::lint::lintObject(p.string());
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.violations.at(0), "unreadable object: " + p.string() + ": not an ELF file");

    std::vector<uint8_t> truncated = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    truncated.resize(64, 0);
    truncated[40] = 0xff; // section headers far past the end
    EXPECT_THROW(kev::lint::ElfFile::fromBytes(truncated, "t"), kev::lint::ElfError);
    EXPECT_FALSE(kev::lint::lintObject("/nonexistent.so").ok);
}

TEST(LintElf, AllowlistTables) {
    kev::lint::ElfSymbol s;
    s.name = "cudaOccupancyMaxActiveBlocksPerMultiprocessor";
    EXPECT_TRUE(kev::lint::undefinedAllowed(s));
    s.name = "sqrtf";
    EXPECT_TRUE(kev::lint::undefinedAllowed(s));
    s.name = "cudaMalloc";
    EXPECT_FALSE(kev::lint::undefinedAllowed(s));
    s.name = "cuLaunchKernel";
    EXPECT_FALSE(kev::lint::undefinedAllowed(s));
    s.name = "cudaGetDriverEntryPoint";
    EXPECT_FALSE(kev::lint::undefinedAllowed(s));
    s.name = "dlopen";
    EXPECT_FALSE(kev::lint::undefinedAllowed(s));
    s.name = "_ZNSt6vectorIiSaIiEE9push_backERKi";
    s.binding = 2;
    EXPECT_TRUE(kev::lint::exportAllowed(s));
    s.binding = 1;
    EXPECT_FALSE(kev::lint::exportAllowed(s));
    EXPECT_TRUE(kev::lint::initEntryAllowed("frame_dummy"));
    EXPECT_FALSE(kev::lint::initEntryAllowed("_GLOBAL__sub_I_cand.cu"));
}

// glibc's atexit is `mov __dso_handle(%rip),%rdx; xor %esi,%esi; jmp __cxa_atexit`. When
// __dso_handle lies 0x??050f?? bytes away, the byte-pattern scan reads a syscall (0f 05) in the
// mov's displacement, and an honest kernel was refused on the H200; matched byte for byte, the
// body references only its jump. Any other body falls back to the strict scan.
TEST(LoadTimeCode, AtexitWithASyscallLookingDisplacementIsItsJumpOnly) {
    using kev::lint::CodeRef;
    const uint8_t body[] = {0xf3, 0x0f, 0x1e, 0xfa,                   // endbr64
                            0x48, 0x8b, 0x15, 0x49, 0x0f, 0x05, 0x00, // mov 0x50f49(%rip),%rdx
                            0x31, 0xf6,                               // xor %esi,%esi
                            0xe9, 0x32, 0xf2, 0xff, 0xff};            // jmp -0xdce
    const uint64_t at = 0x2080;
    bool syscall = false;
    for (const CodeRef& r : kev::lint::scanCode(body, at, sizeof body))
        syscall = syscall || r.kind == CodeRef::Syscall;
    EXPECT_TRUE(syscall); // what the pattern scan alone reports

    const auto refs = kev::lint::atexitRefs(body, at, sizeof body);
    ASSERT_TRUE(refs);
    ASSERT_EQ(refs->size(), 1u);
    EXPECT_EQ((*refs)[0].kind, CodeRef::Direct);
    EXPECT_EQ((*refs)[0].target, at + sizeof body - 0xdce);

    // Without endbr64, and with lea instead of mov: still glibc's.
    EXPECT_TRUE(kev::lint::atexitRefs(body + 4, at, sizeof body - 4));
    uint8_t lea[sizeof body];
    std::memcpy(lea, body, sizeof body);
    lea[5] = 0x8d;
    EXPECT_TRUE(kev::lint::atexitRefs(lea, at, sizeof lea));

    // A real syscall after the jump, another register, a call instead of the jump: not glibc's.
    uint8_t longer[sizeof body + 2];
    std::memcpy(longer, body, sizeof body);
    longer[sizeof body] = 0x0f;
    longer[sizeof body + 1] = 0x05;
    EXPECT_FALSE(kev::lint::atexitRefs(longer, at, sizeof longer));
    uint8_t other[sizeof body];
    std::memcpy(other, body, sizeof body);
    other[6] = 0x05;
    EXPECT_FALSE(kev::lint::atexitRefs(other, at, sizeof other));
    std::memcpy(other, body, sizeof body);
    other[13] = 0xe8;
    EXPECT_FALSE(kev::lint::atexitRefs(other, at, sizeof other));
}
