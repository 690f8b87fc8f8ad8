#include "gemm_bench.h"

#include "candidate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kev::gpu {

namespace {
size_t elementBytes(int dtype) {
    switch (dtype) {
    case KEVOLVE_F16:
    case KEVOLVE_BF16:
        return 2;
    case KEVOLVE_F64:
        return 8;
    default:
        return 4;
    }
}

cudaDataType_t cudaType(int dtype) {
    switch (dtype) {
    case KEVOLVE_F16:
        return CUDA_R_16F;
    case KEVOLVE_BF16:
        return CUDA_R_16BF;
    default:
        return CUDA_R_32F;
    }
}

KevolveTensor tensor(void* data, int dtype, int64_t rows, int64_t cols) {
    KevolveTensor t{};
    t.data = data;
    t.dtype = dtype;
    t.rank = 2;
    t.shape[0] = rows;
    t.shape[1] = cols;
    t.stride[0] = cols;
    t.stride[1] = 1;
    return t;
}
} // namespace

GemmBench::GemmBench(const Task& task, cudaStream_t stream, cublasHandle_t cublas,
                     const KevolveDevice& device)
    : m_stream(stream)
    , m_cublas(cublas)
    , m_device(device)
    , m_a(static_cast<int>(task.dtype("A")))
    , m_b(static_cast<int>(task.dtype("B")))
    , m_c(static_cast<int>(task.dtype("C")))
    , m_accumulate(static_cast<int>(task.accumulate))
    , m_timedK(task.shape.dim("K")) {}

void GemmBench::setShape(const Shape& dims, uint64_t workspaceBytes) {
    m_shapeDims = dims;
    m_shape = {dims.dim("M"), dims.dim("N"), dims.dim("K")};
    const Dims& shape = m_shape;
    const size_t mk = static_cast<size_t>(shape.m * shape.k);
    const size_t kn = static_cast<size_t>(shape.k * shape.n);
    const size_t mn = static_cast<size_t>(shape.m * shape.n);
    // Guards of 256 rows (or at least 1 MiB) catch tiles that run past an input's last row.
    const size_t guardA = std::max<size_t>(1 << 20, 256 * shape.k * elementBytes(m_a));
    const size_t guardB = std::max<size_t>(1 << 20, 256 * shape.n * elementBytes(m_b));
    for (int s = 0; s < kInputSets; ++s) {
        m_A[s] = DeviceBuffer(mk * elementBytes(m_a), guardA);
        m_B[s] = DeviceBuffer(kn * elementBytes(m_b), guardB);
    }
    m_cCand = DeviceBuffer(mn * elementBytes(m_c), 1 << 20);
    m_cRef = DeviceBuffer(mn * elementBytes(m_c), 1 << 20);
    m_workspace = DeviceBuffer(workspaceBytes, 0);
    const size_t big = std::max({mk, kn, mn});
    m_truth = DeviceBuffer(mn * sizeof(double));
    m_scale = DeviceBuffer(mn * sizeof(double));
    m_a64 = DeviceBuffer(big * sizeof(double));
    m_b64 = DeviceBuffer(kn * sizeof(double));
    m_checkVectors = tolerance::gemmCheckVectors(shape.m);
    const size_t vectors = static_cast<size_t>(m_checkVectors);
    m_vecN = DeviceBuffer(shape.n * vectors * sizeof(double));
    m_vecK = DeviceBuffer(shape.k * vectors * sizeof(double));
    m_vecM1 = DeviceBuffer(shape.m * vectors * sizeof(double));
    m_vecM2 = DeviceBuffer(shape.m * vectors * sizeof(double));
    m_acc = DeviceBuffer(sizeof(ErrorAccumulator) + 4 * sizeof(double));
}

FillSpec GemmBench::fillSpec(Distribution dist, uint64_t seed) const {
    FillSpec f;
    f.distribution = dist;
    f.seed = seed;
    switch (dist) {
    case Distribution::Normal:
        break;
    case Distribution::Shifted:
        // A mean of 1 makes every partial sum grow with k: an fp16 accumulator loses the low
        // bits long before k = 4096.
        f.mean = 1.0;
        f.stddev = 1.0;
        break;
    case Distribution::Large:
        // Large magnitudes overflow an fp16 accumulator (65504) while the result stays
        // representable in the output dtype.
        f.mean = 0.0;
        f.stddev = m_c == KEVOLVE_F16 ? 4.0 : 24.0;
        break;
    }
    return f;
}

std::vector<InputCase> GemmBench::validationCases() const {
    std::vector<InputCase> cases;
    for (Distribution d : {Distribution::Normal, Distribution::Shifted, Distribution::Large}) {
        cases.push_back({d, -1, toString(d)});
    }
    return cases;
}

void GemmBench::fill(int set, const InputCase& inputCase, uint64_t seed) {
    const Distribution dist = inputCase.distribution;
    KEV_CUDA(fillRandom(viewA(set), fillSpec(dist, seed), m_stream));
    KEV_CUDA(fillRandom(viewB(set), fillSpec(dist, seed ^ 0x5bd1e995u), m_stream));
}

void GemmBench::refresh(int set, uint64_t seed) {
    fill(set, InputCase{}, seed);
}

void GemmBench::poison(Side side) {
    (side == Side::Candidate ? m_cCand : m_cRef).poison(m_stream);
}

MatrixView GemmBench::viewA(int set) const {
    return {m_A[set].data(), m_a, m_shape.m, m_shape.k, m_shape.k};
}

MatrixView GemmBench::viewB(int set) const {
    return {m_B[set].data(), m_b, m_shape.k, m_shape.n, m_shape.n};
}

MatrixView GemmBench::viewC(const DeviceBuffer& b) const {
    return {b.data(), m_c, m_shape.m, m_shape.n, m_shape.n};
}

KevolveArgs GemmBench::shapeArgs() const {
    KevolveArgs a{};
    a.abi_version = KEVOLVE_ABI_VERSION;
    a.op = KEVOLVE_OP_GEMM;
    a.num_inputs = 2;
    a.num_outputs = 1;
    a.inputs[0] = tensor(nullptr, m_a, m_shape.m, m_shape.k);
    a.inputs[1] = tensor(nullptr, m_b, m_shape.k, m_shape.n);
    a.outputs[0] = tensor(nullptr, m_c, m_shape.m, m_shape.n);
    a.dims[0] = m_shape.m;
    a.dims[1] = m_shape.n;
    a.dims[2] = m_shape.k;
    a.scalars[0] = 1.0;
    a.scalars[1] = 0.0;
    a.device = m_device;
    a.services = services();
    return a;
}

const KevolveArgs& GemmBench::args(int set) {
    m_args = shapeArgs();
    m_args.inputs[0].data = m_A[set].data();
    m_args.inputs[1].data = m_B[set].data();
    m_args.outputs[0].data = m_cCand.data();
    m_args.workspace = m_workspace.bytes() ? m_workspace.data() : nullptr;
    m_args.workspace_bytes = m_workspace.bytes();
    return m_args;
}

void GemmBench::setReferenceLibrary(LaunchFn launch, WorkspaceFn workspaceBytes) {
    m_refLaunch = launch;
    m_refWorkspaceBytes = workspaceBytes;
}

void GemmBench::launchReference(int set, bool intoCandidateOutput) {
    void* c = intoCandidateOutput ? m_cCand.data() : m_cRef.data();
    if (m_refLaunch) {
        KevolveArgs a = shapeArgs();
        if (m_refWorkspaceBytes) {
            const uint64_t bytes = m_refWorkspaceBytes(&a);
            if (bytes != m_refWorkspace.bytes()) {
                m_refWorkspace = DeviceBuffer(bytes);
            }
        }
        a.inputs[0].data = m_A[set].data();
        a.inputs[1].data = m_B[set].data();
        a.outputs[0].data = c;
        a.workspace = m_refWorkspace.bytes() ? m_refWorkspace.data() : nullptr;
        a.workspace_bytes = m_refWorkspace.bytes();
        const int rc = m_refLaunch(&a, m_stream);
        if (rc != 0) {
            throw std::runtime_error("the task's reference library returned " + std::to_string(rc));
        }
        KEV_CUDA(cudaGetLastError());
        return;
    }
    const float alpha = 1.0f, beta = 0.0f;
    const int m = static_cast<int>(m_shape.m), n = static_cast<int>(m_shape.n),
              k = static_cast<int>(m_shape.k);
    // Row-major C = A B is column-major C^T = B^T A^T.
    KEV_CUDA(cublasGemmEx(m_cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, m_B[set].data(),
                          cudaType(m_b), n, m_A[set].data(), cudaType(m_a), k, &beta, c,
                          cudaType(m_c), n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void GemmBench::computeTruth(int set) {
    const double one = 1.0, zero = 0.0;
    const int m = static_cast<int>(m_shape.m), n = static_cast<int>(m_shape.n),
              k = static_cast<int>(m_shape.k);
    // |A||B| first, then A B, reusing the two upcast buffers.
    KEV_CUDA(upcast(viewA(set), m_a64.as<double>(), true, m_stream));
    KEV_CUDA(upcast(viewB(set), m_b64.as<double>(), true, m_stream));
    KEV_CUDA(cublasDgemm(m_cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, m_b64.as<double>(), n,
                         m_a64.as<double>(), k, &zero, m_scale.as<double>(), n));
    KEV_CUDA(upcast(viewA(set), m_a64.as<double>(), false, m_stream));
    KEV_CUDA(upcast(viewB(set), m_b64.as<double>(), false, m_stream));
    KEV_CUDA(cublasDgemm(m_cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, m_b64.as<double>(), n,
                         m_a64.as<double>(), k, &zero, m_truth.as<double>(), n));
}

tolerance::ErrorStats GemmBench::errors(const DeviceBuffer& output) {
    KEV_CUDA(cudaMemsetAsync(m_acc.data(), 0, sizeof(ErrorAccumulator), m_stream));
    KEV_CUDA(errorStats(viewC(output), m_truth.as<double>(), m_scale.as<double>(),
                        m_acc.as<ErrorAccumulator>(), m_stream));
    ErrorAccumulator acc{};
    KEV_CUDA(cudaMemcpyAsync(&acc, m_acc.data(), sizeof acc, cudaMemcpyDeviceToHost, m_stream));
    KEV_CUDA(cudaStreamSynchronize(m_stream));
    tolerance::ErrorStats s;
    s.relFro = acc.truthSq > 0 ? std::sqrt(acc.errSq / acc.truthSq) : std::sqrt(acc.errSq);
    double maxScaled;
    std::memcpy(&maxScaled, &acc.maxScaledBits, sizeof maxScaled);
    s.maxScaled = maxScaled;
    s.nanCount = static_cast<int64_t>(acc.nanCount);
    s.infCount = static_cast<int64_t>(acc.infCount);
    s.checksum = acc.checksum;
    return s;
}

tolerance::Bounds GemmBench::floors(int64_t k) const {
    return tolerance::floors(m_c, m_accumulate, k);
}

TrialCheck GemmBench::judge(double multiple) {
    computeTruth(0);
    TrialCheck t;
    t.candidate = errors(m_cCand);
    t.reference = errors(m_cRef);
    t.verdict = tolerance::judge(t.candidate, t.reference, multiple, floors(m_shape.k));
    return t;
}

json::Value GemmBench::ruleJson(double multiple) const {
    const tolerance::Bounds floor = floors(m_timedK);
    json::Value rule = json::Value::object();
    rule["text"] = tolerance::describeRule(multiple, floor);
    rule["multiple"] = multiple;
    rule["floor_rel_fro"] = floor.relFro;
    rule["floor_max_scaled"] = floor.maxScaled;
    return rule;
}

double GemmBench::prepareSamples(const TrialCheck& timedNormal, double multiple, uint64_t) {
    // Nothing to draw ahead: refresh() fills every sample's inputs on the device.
    // A random projection of a correct output lands close to its normwise error.
    return 4.0 * std::max(multiple * timedNormal.reference.relFro, floors(m_shape.k).relFro);
}

double GemmBench::outputCheck(int set, Side side, uint64_t seed) {
    const DeviceBuffer& output = side == Side::Candidate ? m_cCand : m_cRef;
    double* v = m_vecN.as<double>();
    double* y = m_vecK.as<double>();
    double* z = m_vecM1.as<double>();
    double* cv = m_vecM2.as<double>();
    double* out = reinterpret_cast<double*>(m_acc.as<char>() + sizeof(ErrorAccumulator));
    // Several sign vectors when C has few rows, so that the ratio below sums enough squares to
    // be stable (tolerance::gemmCheckVectors); one pass over each matrix all the same.
    const int r = m_checkVectors;
    KEV_CUDA(randomSigns(v, m_shape.n * r, seed, m_stream));
    KEV_CUDA(matVecs(viewB(set), v, r, y, m_stream));
    KEV_CUDA(matVecs(viewA(set), y, r, z, m_stream));
    KEV_CUDA(matVecs(viewC(output), v, r, cv, m_stream));
    KEV_CUDA(cudaMemsetAsync(out, 0, 3 * sizeof(double), m_stream));
    KEV_CUDA(diffNorms(cv, z, m_shape.m * r, out, m_stream));
    double host[3];
    KEV_CUDA(cudaMemcpyAsync(host, out, sizeof host, cudaMemcpyDeviceToHost, m_stream));
    KEV_CUDA(cudaStreamSynchronize(m_stream));
    if (host[2] > 0) {
        return INFINITY;
    }
    return host[1] > 0 ? std::sqrt(host[0] / host[1]) : std::sqrt(host[0]);
}

} // namespace kev::gpu
