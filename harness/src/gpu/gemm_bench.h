#pragma once
// The GEMM op on the GPU: row-major A (M x K), B (K x N), C (M x N); the cuBLAS reference
// (cublasGemmEx, CUBLAS_COMPUTE_32F, pedantic math for f32 so no TF32); the fp64 truth
// (cublasDgemm on upcast inputs) with the componentwise scale |A||B|; and the per-sample output
// check C v against A (B v).
#include "candidate.h"
#include "cuda_util.h"
#include "device_kernels.h"
#include "task.h"
#include "tolerance.h"

#include <kevolve/abi.h>

#include <cublas_v2.h>

namespace kev::gpu {

struct GemmShape {
    int64_t m = 0, n = 0, k = 0;
};

class GemmBench {
public:
    static constexpr int kInputSets = 2;

    GemmBench(const Task& task, cudaStream_t stream, cublasHandle_t cublas,
              const KevolveDevice& device);

    // (Re)allocates every buffer for `shape`; inputs get NaN guard regions.
    void setShape(const GemmShape& shape, uint64_t workspaceBytes);
    const GemmShape& shape() const { return m_shape; }

    void fill(int set, Distribution dist, uint64_t seed);
    FillSpec fillSpec(Distribution dist, uint64_t seed) const;

    // Arguments for the candidate on input set `set`, writing candidateOutput().
    const KevolveArgs& args(int set);
    // The arguments with null data pointers, for kevolve_workspace_bytes.
    KevolveArgs shapeArgs() const;

    const DeviceBuffer& candidateOutput() const { return m_cCand; }
    const DeviceBuffer& referenceOutput() const { return m_cRef; }
    const DeviceBuffer& workspace() const { return m_workspace; }

    // The reference into referenceOutput(), or into candidateOutput() for the A/A self-check:
    // cuBLAS, or the task's own reference library when one is set.
    void launchReference(int set, bool intoCandidateOutput);
    // A user reference implementing the candidate ABI (task.reference = {"file": ...}). Its
    // workspace, if it asks for one, is its own.
    void setReferenceLibrary(LaunchFn launch, WorkspaceFn workspaceBytes);

    // fp64 truth and |A||B| for input set `set`; then error statistics of an output against them.
    void computeTruth(int set);
    tolerance::ErrorStats errors(const DeviceBuffer& output);

    // ||C v - A (B v)|| / ||A (B v)|| for a random sign vector v: a full-output check per sample.
    double sketchError(int set, const DeviceBuffer& output, uint64_t seed);

    double flops() const { return 2.0 * m_shape.m * m_shape.n * m_shape.k; }
    int outputDtype() const { return m_c; }

private:
    MatrixView viewA(int set) const;
    MatrixView viewB(int set) const;
    MatrixView viewC(const DeviceBuffer& b) const;

    cudaStream_t m_stream;
    cublasHandle_t m_cublas;
    KevolveDevice m_device;
    int m_a, m_b, m_c;
    GemmShape m_shape;
    DeviceBuffer m_A[kInputSets], m_B[kInputSets];
    DeviceBuffer m_cCand, m_cRef, m_workspace, m_refWorkspace;
    LaunchFn m_refLaunch = nullptr;
    WorkspaceFn m_refWorkspaceBytes = nullptr;
    DeviceBuffer m_truth, m_scale, m_a64, m_b64;
    DeviceBuffer m_vecN, m_vecK, m_vecM1, m_vecM2, m_acc;
    KevolveArgs m_args{};
};

} // namespace kev::gpu
