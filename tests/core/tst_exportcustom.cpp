// Exporting a custom-op session: the reference kernel travels with the export as ref.cu, the
// exported task names it relative to itself, and reverify.sh finds it wherever the folder is.
#include "exporter.h"
#include "jsonschema.h"
#include "sessionstore.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace kev;
using namespace Qt::Literals::StringLiterals;

namespace {

const QString kExample = QStringLiteral(KEV_SOURCE_DIR "/resources/examples/custom_op");

// A stand-in for kevolve-harness that resolves the task's reference as the harness does (relative
// to the task file's folder) and records what it found.
const QByteArray kFakeHarness =
    "#!/bin/sh\n"
    "task=\"$3\"\n"
    "ref=$(sed -n 's/.*\"file\": *\"\\([^\"]*\\)\".*/\\1/p' \"$task\")\n"
    "case \"$ref\" in /*) ;; *) ref=\"$(dirname \"$task\")/$ref\" ;; esac\n"
    "{\n"
    "    echo \"args: $*\"\n"
    "    test -f \"$ref\" && cmp -s \"$ref\" \"$EXPECTED_REF\" && echo \"reference: ok\"\n"
    "    test -f \"$5\" && echo \"kernel: ok\"\n"
    "} > \"$HARNESS_LOG\"\n";

QByteArray readBytes(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll();
}

bool writeBytes(const QString& path, const QByteArray& data) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
}

Candidate okStep() {
    Candidate c;
    c.version = 1;
    c.iteration = 1;
    c.strategy.family = u"custom"_s;
    c.strategy.rationale = u"one warp per row"_s;
    c.source = QString::fromUtf8(readBytes(kExample + u"/candidate.cu"_s));
    QString error;
    const auto report = readJsonObjectFile(
        QStringLiteral(KEV_REPORT_FIXTURES "/report_ok_gemm_typed.json"), &error);
    if (!report)
        qFatal("%s", qPrintable(error));
    c.report = EvaluationReport::fromJson(*report, &error);
    if (!c.report)
        qFatal("%s", qPrintable(error));
    c.finishedAt = QDateTime::currentDateTimeUtc();
    return c;
}

} // namespace

class TestExportCustom : public QObject {
    Q_OBJECT

private slots:
    void init();
    void referenceIsCopiedAndNamedRelatively();
    void reverifyScriptFindsTheReference();
    void missingReferenceIsAnError();

private:
    std::unique_ptr<QTemporaryDir> m_tmp; // fresh for every test
    QDir m_dir;
    std::optional<SessionStore> m_store;
    QString m_source; // the task's folder, with its own ref.cu
};

void TestExportCustom::init() {
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    m_dir = QDir(m_tmp->path());
    m_source = m_dir.filePath(u"src"_s);
    QVERIFY(QDir().mkpath(m_source));
    for (const auto& name : {u"task.json"_s, u"ref.cu"_s})
        QVERIFY(writeBytes(m_source + u'/' + name, readBytes(kExample + u'/' + name)));
    QString error;
    const auto task = TaskLibrary::loadFile(m_source + u"/task.json"_s, &error);
    QVERIFY2(task, qPrintable(error));
    QCOMPARE(task->referenceFile, m_source + u"/ref.cu"_s);
    m_store = SessionStore::create(m_dir.filePath(u"session"_s), *task, EngineSettings(), &error);
    QVERIFY2(m_store, qPrintable(error));
    QVERIFY2(m_store->appendStep(okStep(), &error), qPrintable(error));
}

void TestExportCustom::referenceIsCopiedAndNamedRelatively() {
    const QString out = m_dir.filePath(u"out"_s);
    QStringList written;
    QString error;
    QVERIFY2(Exporter::exportSession(*m_store, out, std::nullopt, &written, &error),
             qPrintable(error));
    QCOMPARE(written.mid(0, 3), (QStringList{u"kernel.cu"_s, u"task.json"_s, u"ref.cu"_s}));
    QVERIFY(QFileInfo::exists(out + u"/ref.cu"_s));
    QCOMPARE(readBytes(out + u"/ref.cu"_s), readBytes(kExample + u"/ref.cu"_s));

    const auto json = readJsonObjectFile(out + u"/task.json"_s, &error);
    QVERIFY2(json, qPrintable(error));
    QCOMPARE(json->value(u"reference"_s).toObject(), (QJsonObject{{u"file"_s, u"ref.cu"_s}}));
    // Everything else is the session's task as the harness saw it.
    QJsonObject original = m_store->task().toJson();
    QJsonObject exported = *json;
    original.remove(u"reference"_s);
    exported.remove(u"reference"_s);
    QCOMPARE(exported, original);
    QVERIFY(readBytes(out + u"/report.md"_s).contains("`ref.cu` (the task's reference kernel)"));

    // The folder is self-contained: moved elsewhere, with the original reference gone, it still
    // loads, and its reference is the copy next to it.
    const QString moved = m_dir.filePath(u"moved/out"_s);
    QVERIFY(QDir().mkpath(m_dir.filePath(u"moved"_s)));
    QVERIFY(QDir().rename(out, moved));
    QVERIFY(QFile::remove(m_source + u"/ref.cu"_s));
    const auto task = TaskLibrary::loadFile(moved + u"/task.json"_s, &error);
    QVERIFY2(task, qPrintable(error));
    QCOMPARE(task->referenceFile, moved + u"/ref.cu"_s);
    QCOMPARE(task->dims, m_store->task().dims);
    QCOMPARE(task->scalars, m_store->task().scalars);
}

void TestExportCustom::reverifyScriptFindsTheReference() {
    const QString out = m_dir.filePath(u"out"_s);
    QString error;
    QVERIFY2(Exporter::exportSession(*m_store, out, std::nullopt, nullptr, &error),
             qPrintable(error));
    const QString bin = m_dir.filePath(u"bin"_s);
    QVERIFY(QDir().mkpath(bin));
    const QString log = m_dir.filePath(u"harness.log"_s);
    QVERIFY(writeBytes(bin + u"/kevolve-harness"_s, kFakeHarness));
    QVERIFY(QFile::setPermissions(bin + u"/kevolve-harness"_s,
                                  QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
    QVERIFY(QFile::remove(m_source + u"/ref.cu"_s));

    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(u"PATH"_s, bin + u':' + env.value(u"PATH"_s));
    env.insert(u"HARNESS_LOG"_s, log);
    env.insert(u"EXPECTED_REF"_s, kExample + u"/ref.cu"_s);
    process.setProcessEnvironment(env);
    process.setWorkingDirectory(m_tmp->path());
    process.start(u"/bin/sh"_s, {out + u"/reverify.sh"_s});
    QVERIFY(process.waitForFinished(30'000));
    QCOMPARE(process.exitCode(), 0);
    const QString recorded = QString::fromUtf8(readBytes(log));
    QVERIFY2(recorded.contains(u"args: eval --task task.json --kernel kernel.cu"_s),
             qPrintable(recorded));
    QVERIFY2(recorded.contains(u"reference: ok"_s), qPrintable(recorded));
    QVERIFY2(recorded.contains(u"kernel: ok"_s), qPrintable(recorded));
}

void TestExportCustom::missingReferenceIsAnError() {
    QVERIFY(QFile::remove(m_source + u"/ref.cu"_s));
    const QString out = m_dir.filePath(u"out_missing"_s);
    QString error;
    QVERIFY(!Exporter::exportSession(*m_store, out, std::nullopt, nullptr, &error));
    QVERIFY2(error.startsWith(u"task.reference.file: cannot read "_s + m_source + u"/ref.cu"_s),
             qPrintable(error));
    QVERIFY(!QFileInfo::exists(out));
}

QTEST_GUILESS_MAIN(TestExportCustom)
#include "tst_exportcustom.moc"
