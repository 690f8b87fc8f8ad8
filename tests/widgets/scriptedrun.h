// What the window tests and the workbench benchmark share: the headline task, engine settings for
// scripted agents against kev-fake-harness (the real harness protocol), and waiting on the event
// loop for a condition.
#pragma once

#include "core/enginesettings.h"
#include "core/task.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <QTest>

#include <functional>

namespace kev::test {

inline QString marker(const QString& directive) {
    return QStringLiteral("// fake: ") + directive + QStringLiteral("\n#include <kevolve/abi.h>\n");
}

inline Task headlineTask() {
    QString error;
    auto t = TaskLibrary().resolve(QStringLiteral("gemm_fp16_fp32_4096"), &error);
    if (!t)
        qFatal("%s", qPrintable(error));
    return *t;
}

// Scripted planner, coder and reviewer answering after delayMs; the fake harness keeps its state
// (faults already injected) in stateDir.
inline EngineSettings scriptedSettings(const QStringList& sources, bool stepMode, int iterations,
                                       const QString& stateDir, int delayMs = 20) {
    EngineSettings s;
    s.plannerBackend = s.coderBackend = s.reviewerBackend = QStringLiteral("scripted");
    const QJsonObject script{{QStringLiteral("sources"), QJsonArray::fromStringList(sources)},
                             {QStringLiteral("delay_ms"), delayMs}};
    s.plannerOptions = s.coderOptions = s.reviewerOptions = script;
    s.maxIterations = iterations;
    s.targetSpeedup = 0;
    s.plateauIterations = 0;
    s.stepMode = stepMode;
    s.harnessCommands = {QString::fromUtf8(KEV_FAKE_HARNESS) + QStringLiteral(" serve --state ") +
                         stateDir};
    s.evalTimeoutS = 10;
    return s;
}

inline bool waitFor(const std::function<bool()>& condition, int ms = 30000) {
    QElapsedTimer t;
    t.start();
    while (!condition() && t.elapsed() < ms)
        QTest::qWait(10);
    return condition();
}

} // namespace kev::test
