// Fixed inputs for the LLM tests: a task, device, history, strategy, report and kernel that do
// not change, so that rendered prompts can be compared with golden files.
#ifndef KEV_TESTS_LLMFIXTURES_H
#define KEV_TESTS_LLMFIXTURES_H

#include "agents.h"
#include "jsonschema.h"

#include <QFile>
#include <QJsonDocument>
#include <QString>

namespace kev::test {

inline QString testDir() {
    return QStringLiteral(KEV_LLM_TEST_DIR);
}

inline QString readText(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    return QString::fromUtf8(file.readAll());
}

inline Task fixedTask() {
    QString error;
    const auto task = TaskLibrary().resolve(QStringLiteral("gemm_fp16_fp32_4096"), &error);
    if (!task)
        qFatal("%s", qPrintable(error));
    return *task;
}

inline Strategy fixedStrategy() {
    QString error;
    const auto object = parseJsonObject(R"({
        "family": "mma_sync", "block_m": 128, "block_n": 128, "block_k": 32, "warps": 8,
        "warp_m": 64, "warp_n": 32, "mma": "mma.sync", "vector_width": 8, "stages": 3,
        "smem_layout": "swizzled", "swizzle_bytes": 128, "split_k": 1, "raster": "grouped",
        "group_size": 8, "epilogue": "smem",
        "rationale": "Tensor cores through mma.sync m16n8k16 with ldmatrix from a 128-byte swizzled layout and a 3-stage cp.async pipeline."
    })",
                                        &error);
    const auto strategy = object ? Strategy::fromJson(*object, &error) : std::nullopt;
    if (!strategy)
        qFatal("%s", qPrintable(error));
    return *strategy;
}

inline EvaluationReport fixedReport() {
    QString error;
    const auto object = parseJsonObject(
        readText(QStringLiteral(KEV_SOURCE_DIR
                                "/tests/data/reports/synthetic/report_ok_gemm_prompt.json"))
            .toUtf8(),
        &error);
    const auto report = object ? EvaluationReport::fromJson(*object, &error) : std::nullopt;
    if (!report)
        qFatal("%s", qPrintable(error));
    return *report;
}

inline ReviewFeedback fixedFeedback() {
    ReviewFeedback feedback;
    feedback.compileOk = true;
    feedback.correct = true;
    feedback.status = QStringLiteral("ok");
    feedback.timeMs = 0.281;
    feedback.referenceMs = 0.1995;
    feedback.speedup = 0.71;
    feedback.percentOfFloor = 49.5;
    feedback.bottleneckId = QStringLiteral("smem_bank_conflicts");
    feedback.bottleneckText = QStringLiteral("3.9 bank conflicts per shared-memory request");
    feedback.suggestions = {QStringLiteral("Swizzle the B tile with 128 bytes"),
                            QStringLiteral("Raise stages from 3 to 4")};
    feedback.blame = QStringLiteral("implementation");
    feedback.evidence = {{QStringLiteral("smem_bank_conflicts_per_request"), 3.9}};
    return feedback;
}

inline IterationSummary summary(int version, int parent, const QString& plan, const QString& status,
                                std::optional<double> speedup) {
    IterationSummary s;
    s.version = version;
    s.parentVersion = parent;
    s.iteration = version;
    s.family = plan.section(QLatin1Char(' '), 0, 0);
    s.plan = plan;
    s.status = status;
    s.compileOk = status != QLatin1String("compile_error");
    s.speedup = speedup;
    if (speedup) {
        s.ciLow = *speedup - 0.005;
        s.ciHigh = *speedup + 0.005;
        s.medianMs = 0.1995 / *speedup;
    }
    s.bottleneckId = status == QLatin1String("ok") ? QStringLiteral("smem_bank_conflicts") : status;
    s.blame = QStringLiteral("implementation");
    s.decision = QStringLiteral("approved");
    return s;
}

inline AgentContext fixedContext() {
    AgentContext context;
    context.task = fixedTask();
    context.device = DeviceInfo::h200();
    context.history = {
        summary(1, 0, QStringLiteral("fma_tiled 64x64x16 w8 s1"), QStringLiteral("ok"), 0.12),
        summary(2, 1, QStringLiteral("mma_sync 128x128x32 w8 s2"), QStringLiteral("compile_error"),
                std::nullopt),
        summary(3, 1, QStringLiteral("mma_sync 128x128x32 w8 s3"), QStringLiteral("ok"), 0.71)};
    context.parentStrategy = fixedStrategy();
    context.parentSource = readText(testDir() + QStringLiteral("/data/kernel_v7.cu"));
    context.parentReport = fixedReport();
    context.lastFeedback = fixedFeedback();
    context.humanNote = QStringLiteral("Try a 128x256 block tile next.");
    context.iteration = 4;
    return context;
}

} // namespace kev::test

#endif // KEV_TESTS_LLMFIXTURES_H
