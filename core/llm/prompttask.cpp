// The task section of the LLM prompts: the op, its tensors and arguments as the harness passes
// them, sizes, the correctness rule and what the referee flags, in words
// (PromptBuilder::taskValues).
#include "llm/promptbuilder.h"
#include "llm/prompttext.h"

#include <QFile>
#include <QJsonArray>

using namespace Qt::Literals::StringLiterals;

namespace kev {

using prompttext::json;
using prompttext::number;

namespace {

QString dtypeText(const QString& dtype) {
    if (dtype == u"f16"_s)
        return u"fp16 (IEEE half, __half)"_s;
    if (dtype == u"bf16"_s)
        return u"bf16 (__nv_bfloat16)"_s;
    if (dtype == u"f32"_s)
        return u"fp32 (float)"_s;
    return dtype;
}

QString shapeText(const Shape& shape) {
    return u"M=%1 N=%2 K=%3"_s.arg(shape.m).arg(shape.n).arg(shape.k);
}

// The reference source is part of the task for a custom op (it defines correct), so it is never
// shortened to fit; only a huge file is cut, in the middle, so that it cannot crowd out the rest.
constexpr int kReferenceSourceChars = 24000;

QString scalarValue(double value) {
    return QString::number(value, 'g', 10);
}

QString countText(double value) {
    return QString::number(value, 'f', 0);
}

// One tensor as args passes it (abi.h, "Per-op conventions"; PROTOCOL.md, "Tensors and arguments").
struct TensorSpec {
    QString name;
    QStringList dims; // outermost first
    QString dtype;
    bool output = false;
    QString distribution; // a custom op's inputs only
};

using ShapeSizes = QHash<QString, qint64>;

// The op's arguments in args order, for every op but GEMM.
struct OpSpec {
    QString operation;
    QStringList dims;
    ShapeSizes timed;
    QVector<ShapeSizes> validation;
    QVector<TensorSpec> tensors; // inputs, then outputs
    QStringList scalars;         // "epsilon = 1e-05", in args->scalars order
    QString special;             // the inputs the referee adds to catch careless kernels
};

ShapeSizes shapeSizes(const QJsonObject& object) {
    ShapeSizes sizes;
    for (auto it = object.begin(); it != object.end(); ++it)
        sizes.insert(it.key(), it.value().toInteger());
    return sizes;
}

QString sizesText(const QStringList& dims, const ShapeSizes& sizes) {
    QStringList parts;
    for (const QString& dim : dims)
        parts << u"%1 = %2"_s.arg(dim, QString::number(sizes.value(dim)));
    return parts.join(u", "_s);
}

QString distributionText(const QString& distribution) {
    static const QHash<QString, QString> texts = {
        {u"normal"_s, u"normal, N(0,1)"_s},       {u"uniform"_s, u"uniform, U(-1,1)"_s},
        {u"positive"_s, u"positive, U(0.5,2)"_s}, {u"shifted"_s, u"shifted, N(1,1)"_s},
        {u"large"_s, u"large, N(0,16)"_s},
    };
    return texts.value(distribution, distribution);
}

OpSpec customSpec(const Task& task) {
    OpSpec spec;
    spec.operation =
        u"a custom op (op \"custom\"): it has no built-in meaning, the reference kernel "
        u"below defines the correct output"_s;
    spec.dims = task.dims;
    spec.timed = shapeSizes(task.document.value(u"shape"_s).toObject());
    for (const QJsonValue& shape : task.document.value(u"validation_shapes"_s).toArray())
        spec.validation << shapeSizes(shape.toObject());
    QVector<TensorSpec> inputs;
    QVector<TensorSpec> outputs;
    for (const QJsonValue& value : task.document.value(u"tensors"_s).toArray()) {
        const QJsonObject object = value.toObject();
        TensorSpec tensor;
        tensor.name = object.value(u"name"_s).toString();
        for (const QJsonValue& dim : object.value(u"shape"_s).toArray())
            tensor.dims << dim.toString();
        tensor.dtype = object.value(u"dtype"_s).toString();
        tensor.output = object.value(u"output"_s).toBool(false);
        tensor.distribution = object.value(u"distribution"_s).toString(u"normal"_s);
        (tensor.output ? outputs : inputs) << tensor;
    }
    spec.tensors = inputs + outputs;
    for (const QString& name : task.scalars)
        spec.scalars << u"%1 = %2"_s.arg(name, scalarValue(task.params.value(name).toDouble()));
    return spec;
}

OpSpec registrySpec(const Task& task) {
    OpSpec spec;
    const auto tensor = [&task](const QString& name, QStringList dims, bool output = false) {
        return TensorSpec{name, std::move(dims), task.dtypeOf(name), output, {}};
    };
    const QStringList mn = {u"M"_s, u"N"_s};
    spec.dims = task.op == u"elementwise"_s ? QStringList{u"N"_s} : mn;
    const auto sizes = [&spec](const Shape& shape) {
        ShapeSizes s{{u"N"_s, shape.n}};
        if (spec.dims.contains(u"M"_s))
            s.insert(u"M"_s, shape.m);
        return s;
    };
    spec.timed = sizes(task.shape());
    for (const Shape& shape : task.validationShapes)
        spec.validation << sizes(shape);
    if (task.op == u"gemv"_s) {
        const bool transpose = task.params.value(u"transpose"_s).toBool();
        spec.operation = transpose ? u"y = A^T x, y[j] = sum over i of A[i, j] * x[i] (GEMV, "
                                     u"transposed: reduce down the columns of A)"_s
                                   : u"y = A x, y[i] = sum over j of A[i, j] * x[j] (GEMV)"_s;
        spec.tensors = {tensor(u"A"_s, mn), tensor(u"x"_s, {transpose ? u"M"_s : u"N"_s}),
                        tensor(u"y"_s, {transpose ? u"N"_s : u"M"_s}, true)};
        spec.scalars << u"transpose = %1 (%2)"_s.arg(transpose ? 1 : 0)
                            .arg(transpose ? u"true"_s : u"false"_s);
    } else if (task.op == u"softmax"_s) {
        spec.operation =
            u"Y[i, :] = softmax(X[i, :]) for every row i: exp(x - max) / sum of "
            u"exp(x - max) over the row (a row of -inf gives NaN, a NaN in a row makes "
            u"the row NaN, a +inf entry gives NaN)"_s;
        spec.tensors = {tensor(u"X"_s, mn), tensor(u"Y"_s, mn, true)};
        spec.special =
            u"rows of +-1e4 + N(0,1) (exp without subtracting the row maximum "
            u"overflows); a quarter of the entries -inf, row 0 all -inf (NaN), row 1 -inf "
            u"but one entry (exactly 1); one NaN in the last row (that row NaN); "
            u"N(50,1) rows for the non-zero-mean distribution"_s;
    } else if (task.op == u"layernorm"_s) {
        spec.operation = u"Y[i, j] = (X[i, j] - mean_i) / sqrt(var_i + epsilon) * W[j] + B[j] for "
                         u"every row i, var_i the biased variance (divided by N)"_s;
        spec.tensors = {tensor(u"X"_s, mn), tensor(u"W"_s, {u"N"_s}), tensor(u"B"_s, {u"N"_s}),
                        tensor(u"Y"_s, mn, true)};
        spec.scalars << u"epsilon = %1"_s.arg(
            scalarValue(task.params.value(u"epsilon"_s).toDouble()));
        spec.special = u"constant rows (variance 0, row 0 all zeros so Y = B); rows of a large "
                       u"offset + N(0,1) (offset 1e4 for f32, 500 for f16, 60 for bf16: a one-pass "
                       u"E[x^2] - E[x]^2 variance fails, use two passes or Welford); rows of "
                       u"N(0, 1e-3^2), whose variance is below epsilon"_s;
    } else if (task.op == u"rmsnorm"_s) {
        spec.operation = u"Y[i, j] = X[i, j] / sqrt(mean_i + epsilon) * W[j] for every row i, "
                         u"mean_i the mean of X[i, :]^2 (divided by N; no mean subtracted, no "
                         u"bias)"_s;
        spec.tensors = {tensor(u"X"_s, mn), tensor(u"W"_s, {u"N"_s}), tensor(u"Y"_s, mn, true)};
        spec.scalars << u"epsilon = %1"_s.arg(
            scalarValue(task.params.value(u"epsilon"_s).toDouble()));
        spec.special = u"constant rows (row 0 all zeros, so Y = 0 there); rows of a huge offset + "
                       u"N(0,1) (offset 1e6 for f32, 1e3 for f16, 1e4 for bf16: a sum of squares "
                       u"in f16 overflows, in bf16 it stalls; accumulate in fp32); all-zero rows "
                       u"(epsilon keeps them 0, not NaN) beside rows of N(0, 1e-3^2), whose mean "
                       u"square is about epsilon"_s;
    } else if (task.op == u"reduce"_s) {
        const bool max = task.params.value(u"reduction"_s).toString() == u"max"_s;
        spec.operation = max ? u"Y[i] = max over j of X[i, j] for every row i (a NaN in the row "
                               u"gives NaN, unlike fmax; a row of -inf gives -inf)"_s
                             : u"Y[i] = sum over j of X[i, j] for every row i"_s;
        spec.tensors = {tensor(u"X"_s, mn), tensor(u"Y"_s, {u"M"_s}, true)};
        spec.scalars << (max ? u"reduction = 1 (max)"_s : u"reduction = 0 (sum)"_s);
        spec.special =
            max ? u"rows with a NaN (NaN), a +inf, all -inf (-inf), all large negatives "
                  u"(a maximum started at 0 fails)"_s
                : u"rows of pairs +v, -v with v ~ N(0, 1e4^2) (1e3 for f16) and a "
                  u"quarter small entries (the sum cancels: accumulate in fp32); rows with "
                  u"a NaN, a +inf, a -inf, +inf and -inf (NaN), all large negatives"_s;
    } else if (task.op == u"elementwise"_s) {
        const bool silu = task.params.value(u"function"_s).toString() == u"silu"_s;
        spec.operation = silu
                             ? u"Y = SiLU(X) = X / (1 + exp(-X)), element by element"_s
                             : u"Y = GELU(X) = X / 2 * erfc(-X / sqrt(2)), element by element (the "
                               u"erf form, not the tanh approximation)"_s;
        spec.tensors = {tensor(u"X"_s, {u"N"_s}), tensor(u"Y"_s, {u"N"_s}, true)};
        spec.scalars << (silu ? u"function = 1 (SiLU)"_s : u"function = 0 (GELU)"_s);
        spec.special = u"|x| up to 1e4 (exp overflows: never compute inf / inf) and a NaN every 97 "
                       u"elements (NaN in, NaN out)"_s;
    } else {
        spec.operation = task.op;
    }
    return spec;
}

// Row-major strides as the harness builds them: the last dimension contiguous, the one before it
// padded to ld, the outer ones products of the inner sizes.
QStringList strideNames(const QStringList& dims) {
    QStringList strides(dims.size());
    for (qsizetype i = dims.size() - 1; i >= 0; --i) {
        if (i == dims.size() - 1)
            strides[i] = u"1"_s;
        else if (i == dims.size() - 2)
            strides[i] = u"ld"_s;
        else
            strides[i] = dims[i + 1] + u'*' + strides[i + 1];
    }
    return strides;
}

QStringList strideValues(const QStringList& dims, const ShapeSizes& sizes, int multiple) {
    QStringList strides(dims.size());
    qint64 stride = 1;
    for (qsizetype i = dims.size() - 1; i >= 0; --i) {
        strides[i] = QString::number(stride);
        const qint64 size = sizes.value(dims[i]);
        stride *= i == dims.size() - 1 && dims.size() >= 2
                      ? (size + multiple - 1) / multiple * multiple
                      : size;
    }
    return strides;
}

QString tensorLine(const TensorSpec& tensor, int index, const ShapeSizes& timed, int multiple) {
    QString line = u"  - args->%1[%2] = %3, %4: shape [%5] (rank %6), %7, stride {%8}"_s.arg(
        tensor.output ? u"outputs"_s : u"inputs"_s, QString::number(index), tensor.name,
        tensor.output ? u"output"_s : u"input"_s, tensor.dims.join(u", "_s),
        QString::number(tensor.dims.size()), dtypeText(tensor.dtype),
        strideNames(tensor.dims).join(u", "_s));
    if (tensor.dims.size() >= 2)
        line +=
            u" with ld = %1 rounded up to a multiple of %2"_s.arg(tensor.dims.last()).arg(multiple);
    line += u" ({%1} at the timed shape)"_s.arg(
        strideValues(tensor.dims, timed, multiple).join(u", "_s));
    if (!tensor.output && !tensor.distribution.isEmpty())
        line += u"; drawn from "_s + distributionText(tensor.distribution);
    return line;
}

QString referenceText(const Task& task) {
    if (task.reference == u"file"_s)
        return task.op == u"custom"_s
                   ? u"the task's reference kernel %1 (its source is shown with the task)"_s.arg(
                         task.referenceFile)
                   : u"a user kernel implementing the same ABI (%1)"_s.arg(task.referenceFile);
    if (task.isGemm())
        return u"cuBLAS (cublasGemmEx with CUBLAS_COMPUTE_32F%1)"_s.arg(
            task.a == u"f32"_s ? u" and CUBLAS_PEDANTIC_MATH, so no TF32"_s : QString());
    if (task.op == u"gemv"_s)
        return u"cuBLAS (GEMV, fp32 accumulation)"_s;
    return u"the harness's own straightforward, untuned CUDA kernel"_s;
}

// The reference's source, read when the prompt is rendered: a prompt that cannot show it says so
// rather than failing, since the rest of the task still lets a model write a kernel.
QString referenceSourceText(const Task& task) {
    QFile file(task.referenceFile);
    if (!file.open(QIODevice::ReadOnly))
        return u"- Reference source: (could not be read from %1: %2; work from the operation, the "
               u"tensors and the tolerance above)"_s.arg(task.referenceFile, file.errorString());
    const QString source = QString::fromUtf8(file.readAll()).trimmed();
    if (source.isEmpty())
        return u"- Reference source: (the file %1 is empty)"_s.arg(task.referenceFile);
    QString heading =
        u"- Reference source (%1; it defines the correct output"_s.arg(task.referenceFile);
    if (source.size() > kReferenceSourceChars)
        heading +=
            u"; the file has %1 characters, of which %2 are shown: its head and its tail"_s.arg(
                QString::number(source.size()), QString::number(kReferenceSourceChars));
    return heading + u"):\n```cuda\n"_s + PromptBuilder::trimMiddle(source, kReferenceSourceChars) +
           u"\n```"_s;
}

QString gemmSpecText(const Task& task) {
    QStringList shapes;
    for (const Shape& shape : task.validationShapes)
        shapes << shapeText(shape);
    QStringList lines = {
        u"- Operation: C = alpha * A * B + beta * C (GEMM) with alpha = 1 and beta = 0"_s,
        u"- Timed shape: M = %1, N = %2, K = %3"_s.arg(task.m).arg(task.n).arg(task.k),
        u"- Validation shapes (the kernel must be correct on these too; they are not multiples of "
        u"any tile size): "_s +
            (shapes.isEmpty() ? u"(none)"_s : shapes.join(u"; "_s)),
        u"- Element types: A %1, B %2, C %3; accumulate in %4"_s.arg(
            dtypeText(task.a), dtypeText(task.b), dtypeText(task.c), dtypeText(task.accumulate)),
        u"- Layouts: A is %1-major M x K, B is %2-major K x N, C is %3-major M x N"_s.arg(
            task.layoutA, task.layoutB, task.layoutC),
        u"- Alignment: every leading dimension (N and K) is a multiple of %1 elements and every "
        u"base pointer is 256-byte aligned; M can be any value >= 1"_s.arg(task.leadingDimMultiple),
        u"- Work: %1 GFLOP, at least %2 MB of DRAM traffic"_s.arg(
            QString::number(task.flops() / 1e9, 'f', 1),
            QString::number(task.minBytes() / 1e6, 'f', 1)),
        u"- Reference: "_s + referenceText(task),
    };
    if (task.reference == u"file"_s)
        lines << referenceSourceText(task);
    return lines.join(u'\n');
}

QString taskSpecText(const Task& task) {
    if (task.isGemm())
        return gemmSpecText(task);
    const bool custom = task.op == u"custom"_s;
    const OpSpec spec = custom ? customSpec(task) : registrySpec(task);
    QStringList dimOrder;
    for (qsizetype i = 0; i < spec.dims.size(); ++i)
        dimOrder << u"args->dims[%1] = %2"_s.arg(QString::number(i), spec.dims[i]);
    QStringList validation;
    for (const ShapeSizes& sizes : spec.validation)
        validation << sizesText(spec.dims, sizes);
    QStringList lines = {
        u"- Operation: "_s + spec.operation,
        u"- Dimensions, in the order of args->dims: "_s + dimOrder.join(u", "_s),
        u"- Timed shape: "_s + sizesText(spec.dims, spec.timed),
        u"- Validation shapes (the kernel must be correct on these too; they are not multiples of "
        u"any block size): "_s +
            (validation.isEmpty() ? u"(none)"_s : validation.join(u"; "_s)),
        u"- Tensors, as args passes them (inputs, then outputs, in the order below; shape and "
        u"stride in elements, outermost dimension first, row-major; always read them from args):"_s,
    };
    int inputs = 0;
    int outputs = 0;
    for (const TensorSpec& tensor : spec.tensors)
        lines << tensorLine(tensor, tensor.output ? outputs++ : inputs++, spec.timed,
                            task.leadingDimMultiple);
    QStringList scalars;
    for (qsizetype i = 0; i < spec.scalars.size(); ++i)
        scalars << u"args->scalars[%1]: %2"_s.arg(QString::number(i), spec.scalars[i]);
    lines << u"- Scalars, in the order of args->scalars: "_s +
                 (scalars.isEmpty() ? u"none (args->scalars is unused)"_s : scalars.join(u"; "_s));
    lines << u"- Accumulate in %1 whatever the storage type"_s.arg(dtypeText(task.accumulate));
    lines
        << u"- Alignment: every base pointer is 256-byte aligned; the row stride ld of a tensor of "
           u"rank 2 or more is its last dimension rounded up to a multiple of %1 elements, and "
           u"the inputs' row padding holds NaN, so never read past a row's end; any dimension "
           u"can be 1"_s.arg(task.leadingDimMultiple);
    if (!spec.special.isEmpty())
        lines << u"- Special inputs the referee adds on every validation shape: "_s + spec.special;
    if (custom) {
        const QJsonObject tolerance = task.document.value(u"tolerance"_s).toObject();
        lines
            << u"- Tolerance: atol = %1, rtol = %2: every output element y must satisfy |y - ref| "
               u"<= atol + rtol * |ref|, ref the reference kernel's output on the same inputs"_s
                   .arg(scalarValue(tolerance.value(u"atol"_s).toDouble()),
                        scalarValue(tolerance.value(u"rtol"_s).toDouble()));
        lines << u"- Counts at the timed shape: %1 FLOP, %2 bytes of DRAM traffic at least (every "
                 u"input read once, every output written once; the roofline floor is these bytes "
                 u"over the measured copy bandwidth)"_s.arg(countText(task.flops()),
                                                            countText(task.minBytes()));
    } else {
        lines << u"- Work: %1 GFLOP, at least %2 MB of DRAM traffic"_s.arg(
            QString::number(task.flops() / 1e9, 'f', 3),
            QString::number(task.minBytes() / 1e6, 'f', 1));
    }
    lines << u"- Reference: "_s + referenceText(task);
    if (task.reference == u"file"_s)
        lines << referenceSourceText(task);
    return lines.join(u'\n');
}

QString correctnessText(const Task& task) {
    if (task.op == u"custom"_s) {
        const QJsonObject tolerance = task.document.value(u"tolerance"_s).toObject();
        return u"fresh seeded inputs drawn from each input's declared distribution. The reference "
               u"kernel's output on the same inputs is the truth: every output element must "
               u"satisfy "
               u"|y - ref| <= %1 + %2 * |ref|, and NaN and Inf must appear exactly where the "
               u"reference has them."_s.arg(scalarValue(tolerance.value(u"atol"_s).toDouble()),
                                            scalarValue(tolerance.value(u"rtol"_s).toDouble()));
    }
    const QString inputs = u"fresh seeded inputs from several distributions (normal, non-zero "
                           u"mean, large magnitudes)"_s;
    if (task.isGemm())
        return inputs + u". The error against an fp64 truth must be within %1 times the reference "
                        u"library's own error (with an absolute floor): a kernel that accumulates "
                        u"in a narrower type than %2 fails."_s.arg(number(task.toleranceMultiple),
                                                                   dtypeText(task.accumulate));
    return inputs +
           u" and the special inputs listed with the task. NaN and Inf must appear exactly "
           u"where the fp64 truth has them; elsewhere the error against the fp64 truth "
           u"must be within %1 times the reference kernel's own error (with a floor set "
           u"by the output and accumulation precision): a kernel that accumulates in a "
           u"narrower type than %2, or uses a less careful algorithm than the operation "
           u"states, fails."_s.arg(number(task.toleranceMultiple), dtypeText(task.accumulate));
}

QString suspiciousText(const Task& task) {
    static const QStringList untunedReference = {u"softmax"_s, u"layernorm"_s, u"reduce"_s,
                                                 u"elementwise"_s, u"rmsnorm"_s};
    if (untunedReference.contains(task.op) && task.reference != u"file"_s)
        return u"The reference is an untuned kernel, so a large speedup over it is expected; a "
               u"result faster than 110% of the DRAM floor (the minimum bytes over the measured "
               u"copy "
               u"bandwidth) is impossible without skipping work, and is flagged suspicious and "
               u"checked by a person."_s;
    return u"A result more than 10% faster than the reference is flagged suspicious and checked by "
           u"a person when the reference already reaches 80% of its roofline floor; where it runs "
           u"further below the roof (small-M GEMMs against cuBLAS), only a result faster than "
           u"110% of the floor is."_s;
}

QString shapeRuleText(const Task& task) {
    if (task.isGemm())
        return u"M arbitrary; N and K multiples of %1; no shape is a multiple of your tile sizes, "
               u"so guard every tail"_s.arg(task.leadingDimMultiple);
    return u"every dimension arbitrary, 1 included; no shape is a multiple of your block size or "
           u"vector width, so guard every tail"_s;
}

QString abiRequirementsText(const Task& task) {
    if (task.isGemm())
        return u"- Read M, N, K and the leading dimensions from args "
               u"(KEVOLVE_GEMM_M/N/K/LDA/LDB/LDC); never assume the timed shape. A is inputs[0], B "
               u"is inputs[1], C is outputs[0]; alpha is scalars[0] and beta is scalars[1] (beta "
               u"is "
               u"0, and C holds NaN before your kernel runs: write every element).\n"
               u"- Accumulate in %1; convert to %2 only when storing C."_s.arg(
                   dtypeText(task.accumulate), dtypeText(task.c));
    const OpSpec spec = task.op == u"custom"_s ? customSpec(task) : registrySpec(task);
    QStringList dims;
    for (qsizetype i = 0; i < spec.dims.size(); ++i)
        dims << u"%1 = dims[%2]"_s.arg(spec.dims[i], QString::number(i));
    QStringList tensors;
    int inputs = 0;
    int outputs = 0;
    for (const TensorSpec& tensor : spec.tensors)
        tensors << u"%1 = %2[%3]"_s.arg(tensor.name, tensor.output ? u"outputs"_s : u"inputs"_s,
                                        QString::number(tensor.output ? outputs++ : inputs++));
    QStringList scalars;
    for (qsizetype i = 0; i < spec.scalars.size(); ++i)
        scalars << u"%1 = scalars[%2]"_s.arg(spec.scalars[i].section(u' ', 0, 0),
                                             QString::number(i));
    return u"- Read the sizes from args->dims (%1), each tensor's pointer, shape and stride from "
           u"args (%2) and the scalars from args->scalars (%3); never assume the timed shape or "
           u"compute a stride yourself. The outputs hold NaN before your kernel runs: write every "
           u"element, and nothing past a row's end.\n"
           u"- Accumulate in %4; convert to each output's type only when storing it."_s.arg(
               dims.join(u", "_s), tensors.join(u", "_s),
               scalars.isEmpty() ? u"none"_s : scalars.join(u", "_s), dtypeText(task.accumulate));
}

} // namespace

QString prompttext::planChecksText(const Task& task, const QHash<QString, QString>& device) {
    if (task.isGemm())
        return u"Check feasibility before you answer: shared memory per block (stages x (block_m x "
               u"block_k + block_k x block_n) x element size, plus padding) against %1 bytes; "
               u"registers per thread (the warp tile's accumulators alone are warp_m x warp_n / 32 "
               u"per thread) against 255 and the SM's %2; threads per block (warps x 32) at most "
               u"1024; vector width times element size at most 16 bytes and compatible with the "
               u"alignment of %3 elements; warp tiles that divide the block tile."_s.arg(
                   device.value(u"device.smem_optin"_s), device.value(u"device.regs_per_sm"_s),
                   QString::number(task.leadingDimMultiple));
    return u"Check feasibility before you answer: threads per block (warps x 32) at most 1024; "
           u"registers per thread at most 255 and the SM's %1; shared memory per block against %2 "
           u"bytes; vector width times element size at most 16 bytes, and vector accesses only "
           u"where a row's start allows them (row strides are multiples of %3 elements; a row that "
           u"is not a multiple of the vector width needs a scalar tail). This op is not a GEMM: "
           u"name the family after its mapping (e.g. warp_per_row, block_per_row, grid_stride), "
           u"fill the required tile fields by analogy (block_m: rows per block, block_n: elements "
           u"of a row a block covers per step, block_k: 1, mma: \"fma\", stages: 1 unless you "
           u"prefetch, warp_m and warp_n 0) and put the family's own knobs (threads per "
           u"row, passes over the row, elements per thread) in \"params\"."_s.arg(
               device.value(u"device.regs_per_sm"_s), device.value(u"device.smem_optin"_s),
               QString::number(task.leadingDimMultiple));
}

QHash<QString, QString> PromptBuilder::taskValues(const Task& task) {
    QStringList shapes;
    for (const Shape& shape : task.validationShapes)
        shapes << shapeText(shape);
    const QString operation =
        task.op == u"gemm"_s ? u"C = alpha * A * B + beta * C (GEMM) with alpha = 1 and beta = 0"_s
                             : task.op;
    return {
        {u"task.name"_s, task.name},
        {u"task.description"_s, task.description},
        {u"task.op"_s, task.op},
        {u"task.operation"_s, operation},
        {u"task.m"_s, QString::number(task.m)},
        {u"task.n"_s, QString::number(task.n)},
        {u"task.k"_s, QString::number(task.k)},
        {u"task.validation_shapes"_s, shapes.isEmpty() ? u"(none)"_s : shapes.join(u"; "_s)},
        {u"task.a"_s, dtypeText(task.a)},
        {u"task.b"_s, dtypeText(task.b)},
        {u"task.c"_s, dtypeText(task.c)},
        {u"task.accumulate"_s, dtypeText(task.accumulate)},
        {u"task.layout_a"_s, task.layoutA},
        {u"task.layout_b"_s, task.layoutB},
        {u"task.layout_c"_s, task.layoutC},
        {u"task.alignment"_s, QString::number(task.leadingDimMultiple)},
        {u"task.gflop"_s, QString::number(task.flops() / 1e9, 'f', 1)},
        {u"task.min_mb"_s, QString::number(task.minBytes() / 1e6, 'f', 1)},
        {u"task.reference"_s, referenceText(task)},
        {u"task.tolerance"_s, number(task.toleranceMultiple)},
        {u"task.spec"_s, taskSpecText(task)},
        {u"task.correctness"_s, correctnessText(task)},
        {u"task.suspicious"_s, suspiciousText(task)},
        {u"task.shape_rule"_s, shapeRuleText(task)},
        {u"task.abi_requirements"_s, abiRequirementsText(task)},
    };
}

} // namespace kev
