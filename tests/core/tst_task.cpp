// Tasks: the built-in library parses, bad tasks are refused with the field named, counts.
#include "task.h"

#include <QDir>
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

QString exampleDir() {
    return QDir::cleanPath(QStringLiteral(KEV_SOURCE_DIR "/resources/examples/custom_op"));
}

QJsonObject customTask() {
    QFile file(exampleDir() + QStringLiteral("/task.json"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read the custom op example");
    return QJsonDocument::fromJson(file.readAll()).object();
}

QString writeTask(const QTemporaryDir& dir, const QString& name, const QJsonObject& json) {
    QFile file(dir.filePath(name));
    if (!file.open(QIODevice::WriteOnly))
        qFatal("cannot write %s", qPrintable(file.fileName()));
    file.write(QJsonDocument(json).toJson());
    return file.fileName();
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

    // A task file added to resources/tasks but not to core/core.qrc never reaches the GUI or CLI.
    void everyTaskFileIsInTheLibrary() {
        const QDir source(QStringLiteral(KEV_SOURCE_DIR "/resources/tasks"));
        const QStringList files = source.entryList({QStringLiteral("*.json")}, QDir::Files);
        QVERIFY2(files.size() >= 16, qPrintable(source.absolutePath()));
        const QStringList embedded =
            QDir(QStringLiteral(":/tasks")).entryList({QStringLiteral("*.json")}, QDir::Files);
        for (const QString& file : files)
            QVERIFY2(embedded.contains(file),
                     qPrintable(file + QStringLiteral(" is not in core.qrc")));
        QStringList problems;
        const auto tasks = TaskLibrary().tasks(&problems);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(u'\n')));
        QCOMPARE(tasks.size(), files.size());
        QStringList ops;
        for (const auto& t : tasks)
            ops << t.op;
        for (const char* op :
             {"gemm", "gemv", "softmax", "layernorm", "reduce", "elementwise", "rmsnorm"})
            QVERIFY2(ops.contains(QLatin1String(op)), op);
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

    // What core sends the harness names the reference by an absolute path, resolved against the
    // task file's folder (the harness resolves an inline task's paths on its own host).
    void customExampleResolvesItsReference() {
        QString error;
        const auto t = TaskLibrary().resolve(exampleDir() + QStringLiteral("/task.json"), &error);
        QVERIFY2(t, qPrintable(error));
        QCOMPARE(t->op, QStringLiteral("custom"));
        const QString ref = exampleDir() + QStringLiteral("/ref.cu");
        QCOMPARE(t->referenceFile, ref);
        const QJsonObject sent = t->toJson();
        QCOMPARE(sent.value(QLatin1String("reference")).toObject().value(QLatin1String("file")),
                 QJsonValue(ref));
        QCOMPARE(t->dims, QStringList({QStringLiteral("M"), QStringLiteral("N")}));
        QCOMPARE(t->scalars, QStringList{QStringLiteral("epsilon")});
        // The session keeps the task as sent: parsing it again needs no folder.
        const auto again = Task::fromJson(sent, &error);
        QVERIFY2(again, qPrintable(error));
        QCOMPARE(again->referenceFile, ref);
    }

    // Every panel names what a speed-up is measured against through referenceName().
    void referenceNames() {
        const TaskLibrary library;
        const auto nameOf = [&](const QString& task) {
            QString error;
            const auto t = library.resolve(task, &error);
            return t ? referenceName(*t) : QStringLiteral("error: ") + error;
        };
        QCOMPARE(nameOf(QStringLiteral("gemm_fp16_fp32_4096")), QStringLiteral("cuBLAS"));
        QCOMPARE(nameOf(QStringLiteral("gemv_f16_16384")), QStringLiteral("cuBLAS"));
        for (const char* op : {"softmax_f16_8192", "layernorm_f32_16384x4096",
                               "reduce_sum_f32_16384x8192", "elementwise_gelu_f16_64M"})
            QCOMPARE(nameOf(QLatin1String(op)), QStringLiteral("harness reference"));
        QCOMPARE(nameOf(exampleDir() + QStringLiteral("/task.json")), QStringLiteral("ref.cu"));
        Task unnamed;
        unnamed.op = QStringLiteral("softmax");
        unnamed.reference = QStringLiteral("file");
        QCOMPARE(referenceName(unnamed), QStringLiteral("reference"));
    }

    void customReferenceMustExist() {
        QTemporaryDir dir;
        QJsonObject json = customTask();
        json.insert(QStringLiteral("reference"),
                    QJsonObject{{QStringLiteral("file"), QStringLiteral("missing_ref.cu")}});
        const QString path = writeTask(dir, QStringLiteral("task.json"), json);
        QString error;
        QVERIFY(!TaskLibrary::loadFile(path, &error));
        QVERIFY2(error.contains(QStringLiteral("task.reference.file: no such file ") +
                                dir.filePath(QStringLiteral("missing_ref.cu"))),
                 qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("relative to the task file's folder")),
                 qPrintable(error));
        // Relative to the task file, not to the working directory.
        QFile ref(dir.filePath(QStringLiteral("missing_ref.cu")));
        QVERIFY(ref.open(QIODevice::WriteOnly));
        ref.close();
        const auto t = TaskLibrary::loadFile(path, &error);
        QVERIFY2(t, qPrintable(error));
        QCOMPARE(t->referenceFile, dir.filePath(QStringLiteral("missing_ref.cu")));
    }

    // QJsonObject sorts keys, so the args->dims and args->scalars orders must travel in the
    // "dims" and "scalars" lists; here they are the reverse of the sorted key order.
    void customOrderSurvivesCore() {
        QJsonObject json = customTask();
        json.insert(QStringLiteral("dims"), QJsonArray{QStringLiteral("N"), QStringLiteral("M")});
        json.insert(QStringLiteral("params"),
                    QJsonObject{{QStringLiteral("epsilon"), 1e-6}, {QStringLiteral("alpha"), 2}});
        json.insert(QStringLiteral("scalars"),
                    QJsonArray{QStringLiteral("epsilon"), QStringLiteral("alpha")});
        QString error;
        const auto t = Task::fromJson(json, &error);
        QVERIFY2(t, qPrintable(error));
        QCOMPARE(t->dims, QStringList({QStringLiteral("N"), QStringLiteral("M")}));
        QCOMPARE(t->scalars, QStringList({QStringLiteral("epsilon"), QStringLiteral("alpha")}));
        const QByteArray wire = QJsonDocument(t->toJson()).toJson(QJsonDocument::Compact);
        QVERIFY2(wire.contains(R"("dims":["N","M"])"), wire.constData());
        QVERIFY2(wire.contains(R"("scalars":["epsilon","alpha"])"), wire.constData());
    }

    void badCustomTasks_data() {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("no dims") << QStringLiteral("dims") << QJsonValue()
                                 << QStringLiteral("task.dims: required field is missing");
        QTest::newRow("dims not a list")
            << QStringLiteral("dims") << QJsonValue(QStringLiteral("M"))
            << QStringLiteral("task.dims: expected an array of dimension names");
        QTest::newRow("dims twice")
            << QStringLiteral("dims")
            << QJsonValue(QJsonArray{QStringLiteral("M"), QStringLiteral("M")})
            << QStringLiteral("task.dims[1]: \"M\" is named twice");
        QTest::newRow("dim without size")
            << QStringLiteral("dims")
            << QJsonValue(QJsonArray{QStringLiteral("M"), QStringLiteral("N"), QStringLiteral("K")})
            << QStringLiteral("task.shape.K: required field is missing");
        QTest::newRow("size without dim")
            << QStringLiteral("dims") << QJsonValue(QJsonArray{QStringLiteral("M")})
            << QStringLiteral("task.shape.N: not one of task.dims (M)");
        QTest::newRow("no scalars") << QStringLiteral("scalars") << QJsonValue()
                                    << QStringLiteral("task.scalars: required field is missing");
        QTest::newRow("unknown scalar")
            << QStringLiteral("scalars") << QJsonValue(QJsonArray{QStringLiteral("eps")})
            << QStringLiteral("task.scalars[0]: \"eps\" is not a key of task.params");
        QTest::newRow("unlisted param")
            << QStringLiteral("scalars") << QJsonValue(QJsonArray{})
            << QStringLiteral("task.params.epsilon: not named in task.scalars");
    }

    void badCustomTasks() {
        QFETCH(QString, key);
        QFETCH(QJsonValue, value);
        QFETCH(QString, expected);
        QJsonObject json = customTask();
        if (value.isUndefined() || value.isNull())
            json.remove(key);
        else
            json.insert(key, value);
        QString error;
        QVERIFY(!Task::fromJson(json, &error));
        QVERIFY2(error.startsWith(expected), qPrintable(error));
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
