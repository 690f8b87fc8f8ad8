#include "compile.h"
#include "elf_code.h"
#include "elf_lint.h"

#include "temp_dir.h"

#include <gtest/gtest.h>

#include <algorithm>
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
#include <algorithm>
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

// The decoder on the load-time functions of real objects: every one the lint follows decodes
// (else the strict pattern scan would still misread their displacements).
TEST_F(Lint, ToolchainLoadTimeFunctionsDecode) {
    for (const char* name : {"clean", "rich_registration", "bf16_stub"}) {
        const auto r = lint(name);
        const std::string& evidence = r.checks.at(3).evidence;
        const std::string key = "load-time functions: ";
        const size_t at = evidence.find(key);
        ASSERT_NE(at, std::string::npos) << describe(r);
        std::string list = evidence.substr(at + key.size());
        const auto elf = kev::lint::ElfFile::load((s_dir / (std::string(name) + ".so")).string());
        int decoded = 0;
        for (size_t begin = 0; begin < list.size();) {
            size_t end = list.find(", ", begin);
            if (end == std::string::npos)
                end = list.size();
            const std::string fn = list.substr(begin, end - begin);
            begin = end + 2;
            for (const auto& s : elf.staticSymbols()) {
                if (s.name != fn || s.size == 0)
                    continue;
                const uint8_t* code = elf.bytesAt(s.value, s.size);
                ASSERT_NE(code, nullptr) << fn;
                EXPECT_TRUE(kev::lint::decodeCode(code, s.value, s.size))
                    << name << ": " << fn << " does not decode";
                ++decoded;
            }
        }
        EXPECT_GT(decoded, 1) << name << ": " << list;
    }
}

namespace {

bool hasSyscall(const std::vector<kev::lint::CodeRef>& refs) {
    return std::any_of(refs.begin(), refs.end(), [](const kev::lint::CodeRef& r) {
        return r.kind == kev::lint::CodeRef::Syscall;
    });
}

} // namespace

// Displacements the link chose hold 0f 05 and cd 80: the pattern scan reads system calls, the
// decoder reads a load, a lea, a call through a slot, a direct call and a tail jump.
TEST(LoadTimeCode, DecoderReadsDisplacementsAsDisplacements) {
    using kev::lint::CodeRef;
    const uint8_t body[] = {
        0xf3, 0x0f, 0x1e, 0xfa,                   // 0: endbr64
        0x55,                                     // 4: push %rbp
        0x48, 0x8b, 0x05, 0x11, 0x0f, 0x05, 0x00, // 5: mov 0x50f11(%rip),%rax
        0x48, 0x8d, 0x3d, 0x0f, 0x05, 0x00, 0x00, // 12: lea 0x50f(%rip),%rdi
        0x0f, 0xb6, 0x05, 0xcd, 0x80, 0x00, 0x00, // 19: movzbl 0x80cd(%rip),%eax
        0xff, 0x15, 0x0f, 0x05, 0x00, 0x00,       // 26: call *0x50f(%rip)
        0xe8, 0x0f, 0x05, 0x00, 0x00,             // 32: call +0x50f
        0x85, 0xc0,                               // 37: test %eax,%eax
        0x74, 0x02,                               // 39: je 43
        0xff, 0xd0,                               // 41: call *%rax
        0x5d,                                     // 43: pop %rbp
        0xe9, 0x0f, 0x05, 0xff, 0xff};            // 44: jmp -0xfaf1
    const uint64_t at = 0x10000;
    EXPECT_TRUE(hasSyscall(kev::lint::scanCode(body, at, sizeof body)));
    const auto d = kev::lint::decodeCode(body, at, sizeof body);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->starts, (std::vector<uint64_t>{0, 4, 5, 12, 19, 26, 32, 37, 39, 41, 43, 44}));
    ASSERT_EQ(d->refs.size(), 5u);
    EXPECT_EQ(d->refs[0].kind, CodeRef::AddressTaken);
    EXPECT_EQ(d->refs[0].target, at + 19 + 0x50f);
    EXPECT_EQ(d->refs[1].kind, CodeRef::ThroughSlot);
    EXPECT_EQ(d->refs[1].target, at + 32 + 0x50f);
    EXPECT_EQ(d->refs[2].kind, CodeRef::Direct);
    EXPECT_EQ(d->refs[2].target, at + 37 + 0x50f);
    EXPECT_EQ(d->refs[3].kind, CodeRef::Indirect);
    EXPECT_EQ(d->refs[3].target, at + 41);
    EXPECT_EQ(d->refs[4].kind, CodeRef::Direct);
    EXPECT_EQ(d->refs[4].target, at + sizeof body - 0xfaf1);

    // glibc's atexit, whose displacement misread on the H200, decodes to its jump.
    const uint8_t atexit[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x8b, 0x15, 0x49, 0x0f,
                              0x05, 0x00, 0x31, 0xf6, 0xe9, 0x32, 0xf2, 0xff, 0xff};
    const auto a = kev::lint::decodeCode(atexit, at, sizeof atexit);
    ASSERT_TRUE(a);
    ASSERT_EQ(a->refs.size(), 1u);
    EXPECT_EQ(a->refs[0].kind, CodeRef::Direct);
    EXPECT_EQ(a->refs[0].target, at + sizeof atexit - 0xdce);
}

// A system call is one whether it is an instruction or a byte pair in an immediate, which a
// computed jump (not followed) could enter.
TEST(LoadTimeCode, DecoderReportsSystemCalls) {
    using kev::lint::CodeRef;
    const uint8_t exits[] = {0xb8, 0x3c, 0x00, 0x00, 0x00, // mov $60,%eax
                             0x0f, 0x05,                   // syscall
                             0x0f, 0x34,                   // sysenter
                             0x48, 0x0f, 0x05,             // rex.w syscall
                             0xcd, 0x80,                   // int $0x80
                             0xc3};
    const auto d = kev::lint::decodeCode(exits, 0x1000, sizeof exits);
    ASSERT_TRUE(d);
    std::vector<uint64_t> at;
    for (const CodeRef& r : d->refs) {
        EXPECT_EQ(r.kind, CodeRef::Syscall);
        at.push_back(r.target);
    }
    EXPECT_EQ(at, (std::vector<uint64_t>{0x1005, 0x1007, 0x1009, 0x100c}));

    const uint8_t hidden[] = {0xb8, 0x0f, 0x05, 0x00, 0x00, 0xc3}; // mov $0x50f,%eax; ret
    const auto h = kev::lint::decodeCode(hidden, 0x1000, sizeof hidden);
    ASSERT_TRUE(h);
    ASSERT_EQ(h->refs.size(), 1u);
    EXPECT_EQ(h->refs[0].kind, CodeRef::Syscall);
    EXPECT_EQ(h->refs[0].target, 0x1001u);
}

// What the decoder does not know, or cannot place, is left to the pattern scan.
TEST(LoadTimeCode, DecoderRefusesWhatItCannotPlace) {
    const auto decodes = [](std::initializer_list<uint8_t> bytes) {
        const std::vector<uint8_t> b(bytes);
        return kev::lint::decodeCode(b.data(), 0x1000, b.size()).has_value();
    };
    EXPECT_TRUE(decodes({0x90, 0xc3}));
    // Runs of prefixes: g++'s padding (data16 cs nopw), and one too many for 15 bytes.
    EXPECT_TRUE(decodes({0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0, 0xc3}));
    EXPECT_FALSE(decodes(
        {0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0, 0xc3}));
    // VEX (vzeroupper), EVEX, an address-size prefix, a far call, int 3 spelt cd 03, an empty body.
    EXPECT_FALSE(decodes({0xc5, 0xf8, 0x77, 0xc3}));
    EXPECT_FALSE(decodes({0x62, 0xf1, 0x7c, 0x48, 0x28, 0xc1, 0xc3}));
    EXPECT_FALSE(decodes({0x67, 0x8b, 0x00, 0xc3}));
    EXPECT_FALSE(decodes({0xff, 0x18, 0xc3}));
    EXPECT_FALSE(decodes({0xcd, 0x03, 0xc3}));
    EXPECT_FALSE(decodes({}));
    // A jcc to an instruction start decodes; into the mov's immediate (its 0f 05), it does not.
    EXPECT_TRUE(decodes({0x74, 0x05, 0xb8, 0x0f, 0x05, 0x00, 0x00, 0xc3}));
    EXPECT_FALSE(decodes({0x74, 0x01, 0xb8, 0x0f, 0x05, 0x00, 0x00, 0xc3}));
    EXPECT_FALSE(decodes({0x0f, 0x84, 0x01, 0x00, 0x00, 0x00, 0xb8, 0x0f, 0x05, 0x00, 0x00, 0xc3}));
    EXPECT_FALSE(decodes({0xeb, 0xff, 0xc3})); // into its own displacement
    // A lea of the middle of an instruction, a call into one.
    EXPECT_FALSE(decodes({0x48, 0x8d, 0x05, 0xfb, 0xff, 0xff, 0xff, 0xc3}));
    EXPECT_FALSE(decodes({0xe8, 0xfc, 0xff, 0xff, 0xff, 0xc3}));
    // Instructions running past the end.
    EXPECT_FALSE(decodes({0x90, 0x48, 0x8b, 0x05, 0x00, 0x00}));
    EXPECT_FALSE(decodes({0xe8, 0x00, 0x00}));
    EXPECT_FALSE(decodes({0x66, 0x0f}));
    EXPECT_FALSE(decodes({0x48}));
    EXPECT_FALSE(decodes({0xc7, 0x45, 0xf8, 0x00, 0x00}));
}

// An unoptimised frame: endbr64, push, mov, sub, stores and loads through %rbp, leave, ret.
TEST(LoadTimeCode, DecoderReadsAFrame) {
    const uint8_t body[] = {0xf3, 0x0f, 0x1e, 0xfa,                   // 0: endbr64
                            0x55,                                     // 4: push %rbp
                            0x48, 0x89, 0xe5,                         // 5: mov %rsp,%rbp
                            0x48, 0x83, 0xec, 0x10,                   // 8: sub $0x10,%rsp
                            0x89, 0x7d, 0xfc,                         // 12: mov %edi,-0x4(%rbp)
                            0xc7, 0x45, 0xf8, 0x00, 0x00, 0x00, 0x00, // 15: movl $0x0,-0x8(%rbp)
                            0x66, 0xc7, 0x45, 0xf6, 0x01, 0x00,       // 22: movw $0x1,-0xa(%rbp)
                            0x48, 0x8b, 0x44, 0x24, 0x08,             // 28: mov 0x8(%rsp),%rax
                            0x8b, 0x45, 0xf8,                         // 33: mov -0x8(%rbp),%eax
                            0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00,       // 36: nopw 0x0(%rax,%rax,1)
                            0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00, // 42: nopl 0x0(%rax)
                            0x48, 0xb8, 1,    2,    3,    4,    5,
                            6,    7,    8,                      // 49: movabs $..,%rax
                            0xf7, 0xc1, 0x01, 0x00, 0x00, 0x00, // 59: test $0x1,%ecx
                            0xf7, 0xd8,                         // 65: neg %eax
                            0xc9,                               // 67: leave
                            0xc3};                              // 68: ret
    const auto d = kev::lint::decodeCode(body, 0x1000, sizeof body);
    ASSERT_TRUE(d);
    EXPECT_TRUE(d->refs.empty());
    EXPECT_EQ(d->starts,
              (std::vector<uint64_t>{0, 4, 5, 8, 12, 15, 22, 28, 33, 36, 42, 49, 59, 65, 67, 68}));
}
