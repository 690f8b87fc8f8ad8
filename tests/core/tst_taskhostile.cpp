// Issue 24, "one task validator": core refuses every task the harness would refuse, with the
// harness's message naming the field, before any agent runs. The issue's kevolve-cli accepted 22
// hostile task files the harness refused, among them M = 2^40, M = 4096.0, a tolerance of 1e308, a
// negative flop count, duplicate keys (the last silently won) and a name `../../../escaped`, which
// created the session folder outside kevolve-sessions/.
#include "task.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

using namespace kev;

namespace {

// The headline task as text, with `replacement` (a JSON fragment "KEY": VALUE) in place of the line
// of `replaceKey`.
QByteArray headlineWith(const QByteArray& replaceKey, const QByteArray& replacement) {
    QList<QByteArray> lines = {
        R"("schema_version": 1)",
        R"("name": "t")",
        R"("op": "gemm")",
        R"("dtypes": {"A": "f16", "B": "f16", "C": "f32", "accumulate": "f32"})",
        R"("layout": {"A": "row", "B": "row", "C": "row"})",
        R"("shape": {"M": 4096, "N": 4096, "K": 4096})",
        R"("validation_shapes": [{"M": 1000, "N": 1064, "K": 904}])",
        R"("alignment": {"leading_dim_multiple": 8})",
        R"("reference": "cublas")",
        R"("tolerance": {"multiple": 8.0})",
        R"("timing": {"budget_s": 3.0})",
    };
    for (auto& line : lines) {
        if (!replaceKey.isEmpty() && line.startsWith(QByteArray('"' + replaceKey + '"')))
            line = replacement;
    }
    return "{\n" + lines.join(",\n") + "\n}\n";
}

QString loadError(const QByteArray& text) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("task.json"));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size())
        qFatal("cannot write the task");
    file.close();
    QString error;
    const auto task = TaskLibrary::loadFile(path, &error);
    if (task)
        return QStringLiteral("<accepted>");
    if (!error.startsWith(path + QStringLiteral(": ")))
        return QStringLiteral("<no path> ") + error;
    return error.mid(path.size() + 2);
}

} // namespace

class TestTaskHostile : public QObject {
    Q_OBJECT
private slots:
    void theHeadlineIsAccepted() {
        QCOMPARE(loadError(headlineWith({}, {})), QStringLiteral("<accepted>"));
        QCOMPARE(harnessTaskError(headlineWith({}, {})), QString());
    }

    void hostileTaskFilesAreRefusedNamingTheField_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("field");
        QTest::newRow("M = 2^40") << headlineWith(
                                         "shape",
                                         R"("shape": {"M": 1099511627776, "N": 4096, "K": 4096})")
                                  << QStringLiteral("task.shape.M");
        QTest::newRow("M = 4096.0")
            << headlineWith("shape", R"("shape": {"M": 4096.0, "N": 4096, "K": 4096})")
            << QStringLiteral("task.shape.M");
        QTest::newRow("M = 2^63")
            << headlineWith("shape", R"("shape": {"M": 9223372036854775808, "N": 4096, "K": 4096})")
            << QStringLiteral("task.shape.M");
        QTest::newRow("tolerance 1e308")
            << headlineWith("tolerance", R"("tolerance": {"multiple": 1e308})")
            << QStringLiteral("task.tolerance.multiple");
        QTest::newRow("negative flops")
            << headlineWith("timing", R"("counts": {"flops": -1, "min_bytes": 1})")
            << QStringLiteral("task.counts.flops");
        QTest::newRow("duplicate key") << headlineWith("name", R"("name": "t", "name": "u")")
                                       << QStringLiteral("duplicate key \"name\"");
        QTest::newRow("name with a path")
            << headlineWith("name", R"("name": "../../../escaped")") << QStringLiteral("task.name");
        QTest::newRow("name absolute")
            << headlineWith("name", R"("name": "/tmp/escaped")") << QStringLiteral("task.name");
        QTest::newRow("name dot-dot")
            << headlineWith("name", R"("name": "..")") << QStringLiteral("task.name");
        QTest::newRow("negative K")
            << headlineWith("shape", R"("shape": {"M": 4096, "N": 4096, "K": -8})")
            << QStringLiteral("task.shape.K");
        QTest::newRow("schema 2^64")
            << headlineWith("schema_version", R"("schema_version": 18446744073709551616)")
            << QStringLiteral("task.schema_version");
        // Found by fuzz_task_core (session 9): a 109-digit schema_version was cast to int.
        QTest::newRow("schema 1e108")
            << headlineWith("schema_version", R"("schema_version": 1e108)")
            << QStringLiteral("task.schema_version");
        QTest::newRow("leading_dim_multiple 2^40")
            << headlineWith("alignment", R"("alignment": {"leading_dim_multiple": 1099511627776})")
            << QStringLiteral("task.alignment.leading_dim_multiple");
        QTest::newRow("budget 1e308") << headlineWith("timing", R"("timing": {"budget_s": 1e308})")
                                      << QStringLiteral("task.timing.budget_s");
        // Each dimension within int32, together 1.8e19 bytes: beyond any GPU and any int64 count.
        QTest::newRow("tensors beyond 1 TiB")
            << headlineWith("shape", R"("shape": {"M": 2147483640, "N": 2147483640, "K": 8})")
            << QStringLiteral("task.shape: its tensors need");
        QByteArray shapes = R"("validation_shapes": [)";
        for (int i = 0; i < 100; ++i)
            shapes += (i ? "," : "") + QByteArray(R"({"M": 8, "N": 8, "K": 8})");
        QTest::newRow("100 validation shapes") << headlineWith("validation_shapes", shapes + "]")
                                               << QStringLiteral("task.validation_shapes");
    }

    void hostileTaskFilesAreRefusedNamingTheField() {
        QFETCH(QByteArray, text);
        QFETCH(QString, field);
        const QString error = loadError(text);
        QVERIFY2(error.contains(field), qPrintable(error));
        QVERIFY2(!error.startsWith(u'<'), qPrintable(error));
        // The same document as a QJsonObject (a session's task, the GUI's) is refused too, unless
        // only its text shows the problem (QJsonDocument reads 4096.0 as 4096 and keeps the last of
        // duplicate keys).
        const QJsonObject json = QJsonDocument::fromJson(text).object();
        QString objectError;
        const bool textOnly = field.startsWith(QLatin1String("duplicate")) ||
                              QString::fromUtf8(text).contains(QLatin1String("4096.0"));
        if (!textOnly && !json.isEmpty())
            QVERIFY2(!Task::fromJson(json, &objectError), qPrintable(field));
    }

    // Found by fuzz_task_core: a 37-digit dimension of a non-GEMM task was converted to an
    // integer before its range was checked (undefined behaviour under UBSan).
    void hugeDimensionsOfEveryOpAreRefused() {
        QFile file(QStringLiteral(":/tasks/gemv_f32_8192.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
        for (const double huge : {4.1e36, 9.3e18, -1e300}) {
            json.insert(
                QStringLiteral("validation_shapes"),
                QJsonArray{QJsonObject{{QStringLiteral("M"), 33}, {QStringLiteral("N"), huge}}});
            QString error;
            QVERIFY(!Task::fromJson(json, &error));
            QVERIFY2(error.contains(QStringLiteral("validation_shapes")), qPrintable(error));
        }
    }

    // Found by fuzz_task_core: the harness's rules were applied to GEMM tasks only, so a reduce
    // task with a name the harness refuses passed Task::fromJson.
    void everyOpGetsTheHarnessRules() {
        QFile file(QStringLiteral(":/tasks/reduce_max_f32_16384x8192.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
        QString error;
        QVERIFY2(Task::fromJson(json, &error), qPrintable(error));
        json.insert(QStringLiteral("name"), QStringLiteral("reduce_max_f32_16384x8'192"));
        QVERIFY(!Task::fromJson(json, &error));
        QVERIFY2(error.contains(QLatin1String("task.name")), qPrintable(error));
    }

    // 10^6 validation shapes made a 210 MB session after one step: refused while reading, in
    // bounded time and memory.
    void aMillionValidationShapesAreRefused() {
        QByteArray shapes = R"("validation_shapes": [)";
        shapes.reserve(30 << 20);
        for (int i = 0; i < 1000000; ++i)
            shapes += (i ? "," : "") + QByteArray(R"({"M":8,"N":8,"K":8})");
        const QString error = loadError(headlineWith("validation_shapes", shapes + "]"));
        QVERIFY2(error.contains(QStringLiteral("more than the limit")) ||
                     error.contains(QStringLiteral("task.validation_shapes")),
                 qPrintable(error.left(300)));
    }

    void taskFilesMustBeRegularFiles() {
        QString error;
        QVERIFY(!TaskLibrary::loadFile(QStringLiteral("/dev/zero"), &error));
        QVERIFY2(error.contains(QStringLiteral("a character device, not a regular file")),
                 qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(TestTaskHostile)
#include "tst_taskhostile.moc"
