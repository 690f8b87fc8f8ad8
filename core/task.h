// The task of harness/PROTOCOL.md ("Task"): what the agents must write a kernel for.
#pragma once

#include <QJsonObject>
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

struct Task {
    int schemaVersion = 1;
    QString name;
    QString op;
    QString description;
    // Element types: "f16", "bf16" or "f32".
    QString a;
    QString b;
    QString c;
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
    // Where the task was read from (a file path or ":/tasks/NAME.json"); never serialised.
    QString sourcePath;

    // Parses and validates like the harness does: unknown fields are errors, and the message names
    // the field (e.g. "task.shape.K: 4100 is not a multiple of alignment.leading_dim_multiple
    // (8)").
    static std::optional<Task> fromJson(const QJsonObject& json, QString* error);
    QJsonObject toJson() const;

    Shape shape() const { return {m, n, k}; }
    // 2*M*N*K unless the task overrides it.
    double flops() const;
    // Each input read once and the output written once, unless the task overrides it.
    double minBytes() const;
    // "gemm 4096x4096x4096 f16*f16->f32"
    QString summary() const;

    static int dtypeBytes(const QString& dtype);
};

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

    static std::optional<Task> loadFile(const QString& path, QString* error);

private:
    QStringList m_userDirs;
};

} // namespace kev

Q_DECLARE_METATYPE(kev::Task)
