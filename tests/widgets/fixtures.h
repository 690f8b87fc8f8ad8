// Loads the widget tests' kernels (tests/widgets/data) and the report fixtures shared with core and
// llm (tests/data/reports/synthetic).
#pragma once

#include "core/evaluationreport.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QTest>

namespace kev::test {

inline QString dataPath(const QString& name) {
    return QStringLiteral(KEV_WIDGETS_DATA_DIR) + u'/' + name;
}

inline QString readFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read fixture %s", qPrintable(file.fileName()));
    return QString::fromUtf8(file.readAll());
}

inline QString readText(const QString& name) {
    return readFile(dataPath(name));
}

inline EvaluationReport report(const QString& name) {
    QJsonParseError parseError;
    const QString path = QStringLiteral(KEV_REPORT_FIXTURES) + u'/' + name;
    const auto doc = QJsonDocument::fromJson(readFile(path).toUtf8(), &parseError);
    if (!doc.isObject())
        qFatal("fixture %s is not JSON: %s", qPrintable(name),
               qPrintable(parseError.errorString()));
    QString error;
    const auto parsed = EvaluationReport::fromJson(doc.object(), &error);
    if (!parsed)
        qFatal("fixture %s is not a report: %s", qPrintable(name), qPrintable(error));
    return *parsed;
}

} // namespace kev::test
