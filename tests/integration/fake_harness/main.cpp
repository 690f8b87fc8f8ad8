#include "fakeharness.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>
#include <unistd.h>

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("A scripted stand-in for kevolve-harness serve (tests only)"));
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("serve"), QStringLiteral("the only command"));
    const QCommandLineOption scriptOption(
        QStringLiteral("script"), QStringLiteral("JSON-lines script"), QStringLiteral("file"));
    const QCommandLineOption stateOption(QStringLiteral("state"),
                                         QStringLiteral("folder remembering *_once faults"),
                                         QStringLiteral("dir"));
    const QCommandLineOption noDeviceOption(QStringLiteral("no-device"),
                                            QStringLiteral("report no CUDA device"));
    const QCommandLineOption deviceOption(QStringLiteral("device"),
                                          QStringLiteral("the fake GPU this server measures on"),
                                          QStringLiteral("N"));
    parser.addOptions({scriptOption, stateOption, noDeviceOption, deviceOption});
    parser.process(app);
    if (parser.positionalArguments() != QStringList{QStringLiteral("serve")}) {
        std::fprintf(
            stderr,
            "kev-fake-harness: usage: kev-fake-harness serve [--script FILE] [--state DIR]\n");
        return 2;
    }

    QString scriptPath = parser.value(scriptOption);
    if (scriptPath.isEmpty())
        scriptPath = qEnvironmentVariable("KEV_FAKE_HARNESS_SCRIPT");
    QVector<QJsonObject> script;
    QJsonObject config;
    if (!scriptPath.isEmpty()) {
        QFile file(scriptPath);
        if (!file.open(QIODevice::ReadOnly)) {
            std::fprintf(stderr, "kev-fake-harness: %s: %s\n", qPrintable(scriptPath),
                         qPrintable(file.errorString()));
            return 2;
        }
        int number = 0;
        for (const QByteArray& raw : file.readAll().split('\n')) {
            ++number;
            if (raw.trimmed().isEmpty() || raw.trimmed().startsWith('#'))
                continue;
            QJsonParseError error;
            const QJsonDocument doc = QJsonDocument::fromJson(raw, &error);
            if (!doc.isObject()) {
                std::fprintf(stderr, "kev-fake-harness: %s:%d: not a JSON object\n",
                             qPrintable(scriptPath), number);
                return 2;
            }
            if (doc.object().contains(QLatin1String("config")))
                config = doc.object().value(QLatin1String("config")).toObject();
            else
                script.append(doc.object());
        }
    }
    if (parser.isSet(noDeviceOption))
        config.insert(QStringLiteral("devices"), 0);
    if (parser.isSet(deviceOption)) {
        bool ok = false;
        const int device = parser.value(deviceOption).toInt(&ok);
        if (!ok || device < 0) {
            std::fprintf(stderr, "kev-fake-harness: --device needs a device index\n");
            return 2;
        }
        config.insert(QStringLiteral("device"), device);
    }
    QString stateDir = parser.value(stateOption);
    if (stateDir.isEmpty())
        stateDir =
            QDir(QDir::tempPath())
                .filePath(QStringLiteral("kev-fake-harness-") + QString::number(::getppid()));

    FakeHarness harness(script, config, stateDir);
    harness.start();
    return app.exec();
}
