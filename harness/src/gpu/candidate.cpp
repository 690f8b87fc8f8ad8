#include "candidate.h"

#include <dlfcn.h>

#include <atomic>

namespace kev::gpu {

bool CandidateLibrary::load(const std::string& path, std::string* error) {
    m_handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m_handle) {
        const char* e = dlerror();
        *error = std::string("dlopen failed: ") + (e ? e : "unknown error");
        return false;
    }
    m_launch = reinterpret_cast<LaunchFn>(dlsym(m_handle, "kevolve_launch"));
    if (!m_launch) {
        *error = "the candidate does not export kevolve_launch (extern \"C\" KEVOLVE_EXPORT int "
                 "kevolve_launch(const KevolveArgs*, cudaStream_t))";
        return false;
    }
    m_workspace = reinterpret_cast<WorkspaceFn>(dlsym(m_handle, "kevolve_workspace_bytes"));
    return true;
}

namespace {

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                   const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                   const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                   CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

int encodeTiled(CUtensorMap* map, CUtensorMapDataType dtype, cuuint32_t rank, void* address,
                const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
                CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion,
                CUtensorMapFloatOOBfill fill) {
    static EncodeTiledFn fn = [] {
        void* p = nullptr;
        cudaDriverEntryPointQueryResult status{};
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                             &status) != cudaSuccess ||
            status != cudaDriverEntryPointSuccess) {
            p = nullptr;
        }
        return reinterpret_cast<EncodeTiledFn>(p);
    }();
    if (!fn) {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    return static_cast<int>(fn(map, dtype, rank, address, dims, strides, box, elementStrides,
                               interleave, swizzle, promotion, fill));
}

const KevolveServices g_services = {&encodeTiled};
std::atomic<const char*> g_activity{nullptr};

} // namespace

const KevolveServices* services() {
    return &g_services;
}

void enterCandidate(const char* what) {
    g_activity.store(what);
}

void leaveCandidate() {
    g_activity.store(nullptr);
}

const char* candidateActivity() {
    return g_activity.load();
}

} // namespace kev::gpu
