// Tasks: the built-in library parses, bad tasks are refused with the field named, counts.
#include "task.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

using namespace kev;

namespace {

QJsonObject headline() {
    return QJsonDocument::fromJson(R"({
      "schema_version": 1, "name": "t", "op": "gemm",
      "dtypes": {"A": "f16", "B": "f16", "C": "f32", "accumulate": "f32"},
      "layout": {"A": "row", "B": "row", "C": "row"},
      "shape": {"M": 4096, "N": 4096, "K": 4096},
      "validation_shapes": [{"M": 1000, "N": 1064, "K": 904}],
      "alignment": {"leading_dim_multiple": 8}, "reference": "cublas", "tolerance": {"multiple": 8.0},
      "timing": {"budget_s": 3.0}})")
        .object();
}

} // namespace

class TestTask : public QObject {
    Q_OBJECT
private slots:
    void builtinLibrary() {
        QStringList problems;
        const auto tasks = TaskLibrary().tasks(&problems);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(u'\n')));
        QVERIFY(tasks.size() >= 5);
        QString error;
        const auto headline = TaskLibrary().resolve(QStringLiteral("gemm_fp16_fp32_4096"), &error);
        QVERIFY2(headline, qPrintable(error));
        QCOMPARE(headline->a, QStringLiteral("f16"));
        QCOMPARE(headline->c, QStringLiteral("f32"));
        QCOMPARE(headline->m, 4096);
        QCOMPARE(headline->flops(), 2.0 * 4096 * 4096 * 4096);
        QCOMPARE(headline->minBytes(), 4096.0 * 4096 * 2 + 4096.0 * 4096 * 2 + 4096.0 * 4096 * 4);
        QCOMPARE(headline->sourcePath, QStringLiteral(":/tasks/gemm_fp16_fp32_4096.json"));
    }

    void unknownNameListsKnownOnes() {
        QString error;
        QVERIFY(!TaskLibrary().resolve(QStringLiteral("gemm_nope"), &error));
        QVERIFY2(error.contains(QStringLiteral("unknown task \"gemm_nope\"")), qPrintable(error));
        QVERIFY(error.contains(QStringLiteral("gemm_fp16_fp32_4096")));
        QVERIFY(!TaskLibrary().resolve(QStringLiteral("/no/such/task.json"), &error));
        QVERIFY2(error.contains(QStringLiteral("no such task file")), qPrintable(error));
    }

    void roundTrip() {
        QString error;
        const auto t = Task::fromJson(headline(), &error);
        QVERIFY2(t, qPrintable(error));
        const auto again = Task::fromJson(t->toJson(), &error);
        QVERIFY2(again, qPrintable(error));
        QCOMPARE(again->toJson(), t->toJson());
        QCOMPARE(again->timing.value(QLatin1String("budget_s")).toDouble(), 3.0);
    }

    void badTasks_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("typo") << QStringLiteral("shapes") << QJsonValue(1)
                              << QStringLiteral("task.shapes: unknown field");
        QTest::newRow("op") << QStringLiteral("op") << QJsonValue(QStringLiteral("conv"))
                            << QStringLiteral("task.op: \"conv\" is not one of gemm");
        QTest::newRow("dtype") << QStringLiteral("dtypes/A") << QJsonValue(QStringLiteral("f8"))
                               << QStringLiteral("task.dtypes.A: \"f8\"");
        QTest::newRow("accumulate")
            << QStringLiteral("dtypes/accumulate") << QJsonValue(QStringLiteral("f16"))
            << QStringLiteral("task.dtypes.accumulate:");
        QTest::newRow("layout") << QStringLiteral("layout/B") << QJsonValue(QStringLiteral("col"))
                                << QStringLiteral("task.layout.B:");
        QTest::newRow("alignment")
            << QStringLiteral("shape/K") << QJsonValue(4100)
            << QStringLiteral(
                   "task.shape.K: 4100 is not a multiple of alignment.leading_dim_multiple (8)");
        QTest::newRow("zero") << QStringLiteral("shape/M") << QJsonValue(0)
                              << QStringLiteral("task.shape.M: 0 must be at least 1");
        QTest::newRow("fraction") << QStringLiteral("shape/N") << QJsonValue(8.5)
                                  << QStringLiteral("task.shape.N: expected an integer");
        QTest::newRow("missing dtypes") << QStringLiteral("dtypes") << QJsonValue()
                                        << QStringLiteral("task.dtypes: required field is missing");
        QTest::newRow("tolerance") << QStringLiteral("tolerance/multiple") << QJsonValue(-1)
                                   << QStringLiteral("task.tolerance.multiple:");
        QTest::newRow("reference")
            << QStringLiteral("reference") << QJsonValue(QStringLiteral("cutlass"))
            << QStringLiteral("task.reference:");
        QTest::newRow("timing") << QStringLiteral("timing/rounds")
                                << QJsonValue(QStringLiteral("3"))
                                << QStringLiteral("task.timing.rounds:");
        QTest::newRow("version") << QStringLiteral("schema_version") << QJsonValue(2)
                                 << QStringLiteral("task.schema_version: 2 is not supported");
    }

    void badTasks() {
        QFETCH(QString, path);
        QFETCH(QJsonValue, value);
        QFETCH(QString, expected);
        QJsonObject doc = headline();
        const QStringList parts = path.split(u'/');
        if (parts.size() == 1) {
            if (value.isUndefined() || value.isNull())
                doc.remove(parts[0]);
            else
                doc.insert(parts[0], value);
        } else {
            QJsonObject inner = doc.value(parts[0]).toObject();
            inner.insert(parts[1], value);
            doc.insert(parts[0], inner);
        }
        QString error;
        QVERIFY(!Task::fromJson(doc, &error));
        QVERIFY2(error.startsWith(expected), qPrintable(error));
    }

    void validationShapesRespectAlignment() {
        QJsonObject doc = headline();
        doc.insert(
            QStringLiteral("validation_shapes"),
            QJsonDocument::fromJson(R"([{"M": 7, "N": 16, "K": 16}, {"M": 7, "N": 12, "K": 16}])")
                .array());
        QString error;
        QVERIFY(!Task::fromJson(doc, &error));
        QVERIFY2(
            error.startsWith(QStringLiteral("task.validation_shapes[1].N: 12 is not a multiple")),
            qPrintable(error));
    }

    void userFolderAndFiles() {
        QTemporaryDir dir;
        QJsonObject doc = headline();
        doc.insert(QStringLiteral("name"), QStringLiteral("my_task"));
        QFile good(dir.filePath(QStringLiteral("my_task.json")));
        QVERIFY(good.open(QIODevice::WriteOnly));
        good.write(QJsonDocument(doc).toJson());
        good.close();
        QFile bad(dir.filePath(QStringLiteral("broken.json")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("{ not json");
        bad.close();

        TaskLibrary library({dir.path()});
        QStringList problems;
        const auto tasks = library.tasks(&problems);
        QCOMPARE(problems.size(), 1);
        QVERIFY2(problems.first().contains(QStringLiteral("broken.json")),
                 qPrintable(problems.first()));
        QString error;
        QVERIFY(library.resolve(QStringLiteral("my_task"), &error));
        const auto byPath = library.resolve(good.fileName(), &error);
        QVERIFY2(byPath, qPrintable(error));
        QCOMPARE(byPath->name, QStringLiteral("my_task"));
        QVERIFY(!library.resolve(bad.fileName(), &error));
        QVERIFY2(error.contains(QStringLiteral("invalid JSON")), qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(TestTask)
#include "tst_task.moc"
