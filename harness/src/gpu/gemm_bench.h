#pragma once
// The GEMM op on the GPU: row-major A (M x K), B (K x N), C (M x N); the cuBLAS reference
// (cublasGemmEx, CUBLAS_COMPUTE_32F, pedantic math for f32 so no TF32); the fp64 truth
// (cublasDgemm on upcast inputs) with the componentwise scale |A||B|; and the per-sample output
// check C v against A (B v).
#include "op_bench.h"

#include <cublas_v2.h>

namespace kev::gpu {

class GemmBench final : public OpBench {
public:
    GemmBench(const Task& task, cudaStream_t stream, cublasHandle_t cublas,
              const KevolveDevice& device);

    // Inputs get NaN guard regions.
    void setShape(const Shape& shape, uint64_t workspaceBytes) override;
    const Shape& shape() const override { return m_shapeDims; }

    std::vector<InputCase> validationCases() const override;
    void fill(int set, const InputCase& inputCase, uint64_t seed) override;
    void refresh(int set, uint64_t seed) override;
    bool refreshesContents() const override { return true; }

    const KevolveArgs& args(int set) override;
    KevolveArgs shapeArgs() const override;
    const DeviceBuffer& workspace() const override { return m_workspace; }
    std::vector<const DeviceBuffer*> inputBuffers(int set) const override {
        return {&m_A[set], &m_B[set]};
    }
    std::vector<const DeviceBuffer*> candidateOutputBuffers() const override { return {&m_cCand}; }
    void poison(Side side) override;

    // cuBLAS, or the task's own reference library when one is set.
    void launchReference(int set, bool intoCandidateOutput) override;
    // Its workspace, if it asks for one, is its own.
    void setReferenceLibrary(LaunchFn launch, WorkspaceFn workspaceBytes) override;

    // rel_fro and max_scaled against the fp64 truth, componentwise scaled by |A||B|, within the
    // tolerance rule's multiple of cuBLAS's own errors or the floor for K.
    TrialCheck judge(double multiple) override;
    json::Value ruleJson(double multiple) const override;

    // ||C v - A (B v)|| / ||A (B v)|| for a random sign vector v: a full-output check per sample.
    double prepareSamples(const TrialCheck& timedNormal, double multiple, uint64_t seed) override;
    double outputCheck(int set, Side side, uint64_t seed) override;

    double flops() const override { return 2.0 * m_shape.m * m_shape.n * m_shape.k; }

private:
    struct Dims {
        int64_t m = 0, n = 0, k = 0;
    };

    FillSpec fillSpec(Distribution dist, uint64_t seed) const;
    // fp64 truth and |A||B| for input set `set`; then error statistics of an output against them.
    void computeTruth(int set);
    tolerance::ErrorStats errors(const DeviceBuffer& output);
    tolerance::Bounds floors(int64_t k) const;
    MatrixView viewA(int set) const;
    MatrixView viewB(int set) const;
    MatrixView viewC(const DeviceBuffer& b) const;

    cudaStream_t m_stream;
    cublasHandle_t m_cublas;
    KevolveDevice m_device;
    int m_a, m_b, m_c;
    int m_accumulate;
    int64_t m_timedK; // the task's timed K, which the report's rule names
    Dims m_shape;
    Shape m_shapeDims;
    DeviceBuffer m_A[kInputSets], m_B[kInputSets];
    DeviceBuffer m_cCand, m_cRef, m_workspace, m_refWorkspace;
    LaunchFn m_refLaunch = nullptr;
    WorkspaceFn m_refWorkspaceBytes = nullptr;
    DeviceBuffer m_truth, m_scale, m_a64, m_b64;
    DeviceBuffer m_vecN, m_vecK, m_vecM1, m_vecM2, m_acc;
    int m_checkVectors = 1; // sign vectors of the per-sample check (tolerance::gemmCheckVectors)
    KevolveArgs m_args{};
};

} // namespace kev::gpu
