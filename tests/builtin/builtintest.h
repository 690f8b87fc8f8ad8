// Helpers of the built-in backend's unit tests (tst_builtin, tst_memoryfamilies,
// tst_builtinagents): tasks of the library and of tests/builtin/tasks, families by id, and
// reports in harness/PROTOCOL.md's format.
#ifndef KEV_TESTS_BUILTINTEST_H
#define KEV_TESTS_BUILTINTEST_H

#include "builtin/builtinplanner.h"
#include "builtin/builtinreviewer.h"
#include "builtin/kernelfamily.h"
#include "builtin/knowledgebase.h"
#include "deviceinfo.h"
#include "evaluationreport.h"
#include "task.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QTest>

namespace kevtest {

using namespace Qt::StringLiterals;

inline kev::Task task(const QString& name) {
    QString error;
    auto t = kev::TaskLibrary().resolve(name, &error);
    if (!t)
        qFatal("task %s: %s", qPrintable(name), qPrintable(error));
    return *t;
}

inline const kev::KernelFamily& family(const QString& id) {
    const kev::KernelFamily* f = kev::FamilyRegistry::instance().find(id);
    if (!f)
        qFatal("no family %s", qPrintable(id));
    return *f;
}

// A report in harness/PROTOCOL.md's format.
inline kev::EvaluationReport report(const QString& status, double speedup = 0.0, qint64 spill = 0,
                                    const QJsonObject& profile = {}) {
    QJsonObject json{
        {u"schema_version"_s, 1},
        {u"kind"_s, u"kevolve.report"_s},
        {u"status"_s, status},
        {u"message"_s, u"recorded"_s},
        {u"compile"_s,
         QJsonObject{{u"ok"_s, status != u"compile_error"},
                     {u"log"_s, status == u"compile_error"
                                    ? u"kernel.cu(12): error: identifier \"x\" is undefined"_s
                                    : QString()},
                     {u"kernels"_s, QJsonArray{QJsonObject{{u"name"_s, u"k"_s},
                                                           {u"registers"_s, 234},
                                                           {u"spill_store_bytes"_s, spill},
                                                           {u"spill_load_bytes"_s, spill}}}}}},
    };
    if (status == u"ok" || status == u"incorrect") {
        json.insert(
            u"correctness"_s,
            QJsonObject{{u"ok"_s, status == u"ok"},
                        {u"trials"_s,
                         QJsonArray{QJsonObject{
                             {u"phase"_s, u"pre"_s},
                             {u"shape"_s, QJsonObject{{u"M"_s, 257}, {u"N"_s, 392}, {u"K"_s, 520}}},
                             {u"margin"_s, status == u"ok" ? 0.1 : 40.0},
                             {u"pass"_s, status == u"ok"}}}}});
    }
    if (status == u"ok") {
        json.insert(u"timing"_s,
                    QJsonObject{{u"median_ms"_s, 0.4},
                                {u"reference_median_ms"_s, 0.4 * speedup},
                                {u"speedup_vs_reference"_s, speedup},
                                {u"ci95"_s, QJsonArray{speedup - 0.01, speedup + 0.01}}});
    }
    if (!profile.isEmpty())
        json.insert(u"profile"_s, QJsonObject{{u"candidate"_s, profile}});
    QString error;
    auto r = kev::EvaluationReport::fromJson(json, &error);
    if (!r)
        qFatal("fixture report: %s", qPrintable(error));
    return *r;
}

// The memory-bound test tasks (tests/builtin/tasks), until the library has its own.
inline kev::Task memoryTask(const QString& name) {
    return task(QStringLiteral(KEV_BUILTIN_TASKS "/") + name + u".json"_s);
}

inline const QStringList kMemoryTasks{
    u"softmax_f32_test"_s,    u"softmax_f16_test"_s,          u"layernorm_bf16_test"_s,
    u"layernorm_f32_test"_s,  u"rmsnorm_bf16_test"_s,         u"rmsnorm_f32_test"_s,
    u"reduce_max_f32_test"_s, u"reduce_sum_f16_test"_s,       u"gemv_f16_test"_s,
    u"gemv_t_f16_test"_s,     u"elementwise_gelu_f16_test"_s, u"elementwise_silu_f32_test"_s};

inline std::optional<kev::Task> parse(const QString& json, QString* error) {
    return kev::Task::fromJson(QJsonDocument::fromJson(json.toUtf8()).object(), error);
}

inline QStringList moveParams(const kev::ReviewFeedback& fb) {
    QStringList out;
    const QJsonArray moves = fb.evidence.value(u"moves"_s).toArray();
    for (const QJsonValue& m : moves)
        out << m.toObject().value(u"param"_s).toString();
    return out;
}

} // namespace kevtest

#endif // KEV_TESTS_BUILTINTEST_H
