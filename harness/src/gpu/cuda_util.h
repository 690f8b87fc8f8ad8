#pragma once
// Error handling for the GPU child: every CUDA and cuBLAS call is checked; a failure becomes a
// CudaFailure carrying the call and the error's name, which run-one turns into a report.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace kev::gpu {

struct CudaFailure : std::runtime_error {
    CudaFailure(const std::string& what, int errorCode, bool isSticky)
        : std::runtime_error(what)
        , code(errorCode)
        , sticky(isSticky) {}
    int code;
    bool sticky; // the context is unusable (illegal address, launch failure, ...)
};

void check(cudaError_t err, const char* call, const char* file, int line);
void check(cublasStatus_t status, const char* call, const char* file, int line);

#define KEV_CUDA(call) ::kev::gpu::check((call), #call, __FILE__, __LINE__)

// A device allocation with NaN-filled guard regions on both sides, so that reads past either end
// of an input feed NaN into the result instead of silently reading a neighbour.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(size_t bytes, size_t guardBytes = 0);
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer();

    void* data() const { return m_data; }
    template <typename T> T* as() const { return static_cast<T*>(m_data); }
    size_t bytes() const { return m_bytes; }
    // The whole allocation (guards included): what cudaIpcGetMemHandle exports.
    void* base() const { return m_base; }
    size_t offset() const {
        return static_cast<size_t>(static_cast<char*>(m_data) - static_cast<char*>(m_base));
    }
    size_t allocationBytes() const { return m_base ? m_bytes + 2 * offset() : 0; }
    // Fills the buffer (not its guards) with 0xFF bytes: NaN in f32, f16, bf16 and f64.
    void poison(cudaStream_t stream) const;

private:
    void* m_base = nullptr;
    void* m_data = nullptr;
    size_t m_bytes = 0;
};

} // namespace kev::gpu
