// The task of harness/PROTOCOL.md ("Task"): what the agents must write a kernel for.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QMap>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>

namespace kev {

struct Shape {
    qint64 m = 0;
    qint64 n = 0;
    qint64 k = 0;

    QJsonObject toJson() const;
    bool operator==(const Shape& other) const {
        return m == other.m && n == other.n && k == other.k;
    }
};

// Ops (abi.h, "Per-op conventions"): "gemm", the memory-bound "gemv", "softmax", "layernorm",
// "reduce", "elementwise", "rmsnorm", and "custom" (the task declares everything; core only passes
// it on). Dimensions other than GEMM's map onto m and n: rows and row length (gemv: A is m x n),
// and elementwise's N is n with m = 1; k is 0 outside GEMM.
struct Task {
    int schemaVersion = 1;
    QString name;
    QString op;
    QString description;
    // Element types: "f16", "bf16" or "f32". For ops other than GEMM: a is the first input's, b the
    // second input's (a when there is one input), c the first output's; tensorDtypes has them all.
    QString a;
    QString b;
    QString c;
    QMap<QString, QString> tensorDtypes; // tensor name ("A", "X", "W", "y", ...) -> dtype
    QString accumulate;
    QString layoutA = QStringLiteral("row");
    QString layoutB = QStringLiteral("row");
    QString layoutC = QStringLiteral("row");
    qint64 m = 0;
    qint64 n = 0;
    qint64 k = 0;
    QVector<Shape> validationShapes;
    int leadingDimMultiple = 8;
    // "cublas", or "file" with referenceFile set.
    QString reference = QStringLiteral("cublas");
    QString referenceFile;
    double toleranceMultiple = 8.0;
    // The optional "timing" block, kept as written (the harness owns its meaning).
    QJsonObject timing;
    std::optional<double> countFlops;
    std::optional<double> countMinBytes;
    // The op's parameters ("params") with the defaults filled in: gemv {"transpose": bool},
    // layernorm and rmsnorm {"epsilon": number}, reduce {"reduction": "sum"|"max"}, elementwise
    // {"function": "gelu"|"silu"}; custom: the numbers as written.
    QJsonObject params;
    // Custom ops: the names of args->dims and args->scalars in order ("dims" and "scalars" as
    // written; params and shapes are objects, whose key order QJsonObject does not keep).
    QStringList dims;
    QStringList scalars;
    // Ops other than GEMM: the task as written. toJson() returns it unchanged, so the harness
    // (which owns their meaning) sees every field, including those core does not model (custom
    // tensors).
    QJsonObject document;
    // Where the task was read from (a file path or ":/tasks/NAME.json"); never serialised.
    QString sourcePath;

    // Parses and validates like the harness does: unknown fields are errors, and the message names
    // the field (e.g. "task.shape.K: 4100 is not a multiple of alignment.leading_dim_multiple
    // (8)").
    static std::optional<Task> fromJson(const QJsonObject& json, QString* error);
    QJsonObject toJson() const;

    Shape shape() const { return {m, n, k}; }
    bool isGemm() const { return op == QLatin1String("gemm"); }
    // The dtype of a tensor by name, or an empty string when the op has no such tensor.
    QString dtypeOf(const QString& tensor) const { return tensorDtypes.value(tensor); }
    // The op's tensor names, inputs first ({} for custom and unknown ops).
    static QStringList tensorNames(const QString& op);
    // The conventional count of the op (2*M*N*K for GEMM) unless the task overrides it.
    double flops() const;
    // Each input read once and the output written once, unless the task overrides it.
    double minBytes() const;
    // "gemm 4096x4096x4096 f16*f16->f32", "softmax 8192x8192 f16->f16"
    QString summary() const;

    static int dtypeBytes(const QString& dtype);
};

// The harness's verdict on a task document (JSON text, as written): empty when kevolve-harness
// would accept it, otherwise its message naming the field. Task::fromJson and TaskLibrary::loadFile
// apply it, so a task the harness would refuse is refused before any agent runs.
QString harnessTaskError(const QByteArray& text);

// What a speed-up is measured against, for display: "cuBLAS" for GEMM and GEMV against cuBLAS,
// "harness reference" for the ops whose reference is the harness's own straightforward kernel
// (softmax, layernorm, rmsnorm, reduce, elementwise), and the file's base name ("ref.cu") for a
// file reference (custom ops always have one); "reference" when the file name is empty.
QString referenceName(const Task& task);

// The built-in tasks (resources/tasks, embedded as ":/tasks/*.json") plus the tasks in user
// folders.
class TaskLibrary {
public:
    explicit TaskLibrary(QStringList userDirs = {});

    QStringList userDirs() const { return m_userDirs; }

    // Every valid task, built-in first, then user files; a later task with an existing name is
    // skipped. Files that fail to parse are listed in *problems when given.
    QVector<Task> tasks(QStringList* problems = nullptr) const;

    // A library name ("gemm_fp16_fp32_4096") or a path to a task file.
    std::optional<Task> resolve(const QString& nameOrPath, QString* error) const;

    // Reads and parses a task file; a relative reference file is resolved against the file's
    // folder and must exist.
    static std::optional<Task> loadFile(const QString& path, QString* error);
    // Makes task.referenceFile (and the document sent to the harness) an absolute path, relative
    // ones against the folder of task.sourcePath; false with *error naming the field when the
    // file does not exist.
    static bool resolveReferenceFile(Task& task, QString* error);

private:
    QStringList m_userDirs;
};

} // namespace kev

Q_DECLARE_METATYPE(kev::Task)
