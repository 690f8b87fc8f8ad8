#include "cuda_util.h"

#include <utility>

namespace kev::gpu {

namespace {
bool isSticky(cudaError_t err) {
    switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown:
        return true;
    default:
        return false;
    }
}
} // namespace

void check(cudaError_t err, const char* call, const char* file, int line) {
    if (err == cudaSuccess) {
        return;
    }
    std::string what = std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) +
                       ") from " + call + " at " + file + ":" + std::to_string(line);
    throw CudaFailure(what, static_cast<int>(err), isSticky(err));
}

void check(cublasStatus_t status, const char* call, const char* file, int line) {
    if (status == CUBLAS_STATUS_SUCCESS) {
        return;
    }
    std::string what = std::string(cublasGetStatusName(status)) + " from " + call + " at " + file +
                       ":" + std::to_string(line);
    throw CudaFailure(what, static_cast<int>(status), false);
}

DeviceBuffer::DeviceBuffer(size_t bytes, size_t guardBytes)
    : m_bytes(bytes) {
    const size_t guard = (guardBytes + 255) / 256 * 256;
    KEV_CUDA(cudaMalloc(&m_base, bytes + 2 * guard));
    KEV_CUDA(cudaMemset(m_base, 0xFF, bytes + 2 * guard));
    // cudaMemset runs on the legacy stream, which the harness's non-blocking streams do not wait
    // for: without this, a copy into a new buffer on such a stream (the input guard's first
    // snapshot of a shape) could be overwritten by the fill afterwards (seen on the H200 as
    // "the candidate changed its inputs" on a correct kernel's first call).
    KEV_CUDA(cudaDeviceSynchronize());
    m_data = static_cast<char*>(m_base) + guard;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : m_base(std::exchange(other.m_base, nullptr))
    , m_data(std::exchange(other.m_data, nullptr))
    , m_bytes(std::exchange(other.m_bytes, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
        if (m_base) {
            cudaFree(m_base);
        }
        m_base = std::exchange(other.m_base, nullptr);
        m_data = std::exchange(other.m_data, nullptr);
        m_bytes = std::exchange(other.m_bytes, 0);
    }
    return *this;
}

DeviceBuffer::~DeviceBuffer() {
    if (m_base) {
        cudaFree(m_base);
    }
}

void DeviceBuffer::poison(cudaStream_t stream) const {
    if (m_bytes) {
        KEV_CUDA(cudaMemsetAsync(m_data, 0xFF, m_bytes, stream));
    }
}

} // namespace kev::gpu
