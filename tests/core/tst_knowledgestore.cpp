// The per-user knowledge store (issue 18): its schema and migrations (from a version-1 database
// this test writes), the refusal of damaged, foreign and newer databases without changing them,
// the JSON-lines export and import (round trip, merge without duplicates, bad lines refused with
// the line and the field), and the nearest-task ranking.
#include "knowledgestore.h"
#include "textdiff.h"

#include <QBuffer>
#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

using namespace kev;
using namespace Qt::StringLiterals;

namespace {

TaskFeatures features(const QString& name, qint64 m, qint64 n, qint64 k,
                      const QString& device = u"NVIDIA H200"_s,
                      const QString& dtypes = u"A:f16,B:f16,C:f32"_s) {
    TaskFeatures f;
    f.taskName = name;
    f.op = u"gemm"_s;
    f.dtypes = dtypes;
    f.m = m;
    f.n = n;
    f.k = k;
    f.deviceName = device;
    f.smCount = 132;
    f.driver = u"560.35.03"_s;
    return f;
}

KnowledgeRecord record(const QString& session, int version, const TaskFeatures& task, int blockM,
                       double speedup, const QString& decision = u"automatic"_s) {
    KnowledgeRecord r;
    r.sessionId = session;
    r.version = version;
    r.recordedAt = QDateTime(QDate(2026, 12, 1), QTime(10, version, 0), Qt::UTC);
    r.kevolveVersion = u"0.1.0"_s;
    r.task = task;
    r.family = u"mma_sync"_s;
    r.plan.family = u"mma_sync"_s;
    r.plan.blockM = blockM;
    r.plan.blockN = 128;
    r.plan.blockK = 32;
    r.plan.warps = 8;
    r.plan.mma = u"mma.sync"_s;
    r.plan.warpM = blockM / 2; // 2 x 4 warp tiles: the 8 warps
    r.plan.warpN = 32;
    r.plan.stages = 3;
    r.plan.vectorWidth = 8;
    r.plan.smemLayout = u"swizzled"_s;
    r.plan.swizzleBytes = 128;
    r.plan.raster = u"grouped"_s;
    r.plan.groupSize = 8;
    r.plan.epilogue = u"smem"_s;
    r.origin = u"agent"_s;
    r.status = u"ok"_s;
    r.speedup = speedup;
    r.decision = decision;
    return r;
}

QByteArray digest(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

// Runs statements on an SQLite file outside the store, as another program (or an old Kevolve)
// would have written it.
void writeDatabase(const QString& path, const QStringList& statements) {
    const QString name = u"fixture_"_s + path;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(u"QSQLITE"_s, name);
        db.setDatabaseName(path);
        QVERIFY(db.open());
        QSqlQuery q(db);
        for (const QString& s : statements)
            QVERIFY2(q.exec(s), qPrintable(s));
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
}

// The version-1 schema exactly as knowledgestore.cpp defines it.
// A plan as version 1 stored it (no rationale).
const QString kOldPlan =
    u"{\"family\":\"mma_sync\",\"block_m\":128,\"block_n\":128,\"block_k\":32,\"warps\":8,"
    "\"warp_m\":64,\"warp_n\":32,\"mma\":\"mma.sync\",\"vector_width\":8,\"stages\":3,"
    "\"smem_layout\":\"swizzled\",\"swizzle_bytes\":128,\"epilogue\":\"smem\"}"_s;

const QStringList kV1 = {
    u"CREATE TABLE schema_version (version INTEGER NOT NULL)"_s,
    u"INSERT INTO schema_version (version) VALUES (1)"_s,
    u"CREATE TABLE measurements ("
    " session_id TEXT NOT NULL, version INTEGER NOT NULL, recorded_at TEXT NOT NULL,"
    " task_name TEXT NOT NULL, op TEXT NOT NULL, dtypes TEXT NOT NULL,"
    " m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,"
    " device_name TEXT NOT NULL, sm_count INTEGER NOT NULL, driver TEXT NOT NULL,"
    " family TEXT NOT NULL, plan TEXT NOT NULL, status TEXT NOT NULL,"
    " speedup REAL, percent_of_floor REAL, decision TEXT NOT NULL, reason TEXT NOT NULL,"
    " PRIMARY KEY (session_id, version))"_s,
};

QByteArray exportOf(const KnowledgeStore& store) {
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QString error;
    const auto count = store.exportTo(buffer, &error);
    if (!count)
        qWarning("%s", qPrintable(error));
    return buffer.data();
}

std::optional<KnowledgeImportResult> importText(KnowledgeStore& store, const QByteArray& text,
                                                QString* error) {
    QBuffer buffer;
    buffer.setData(text);
    buffer.open(QIODevice::ReadOnly);
    return store.importFrom(buffer, error);
}

} // namespace

class TestKnowledgeStore : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    int m_files = 0;
    QString freshPath() { return m_dir.filePath(u"store%1.sqlite"_s.arg(++m_files)); }

private slots:
    void createsTheCurrentSchemaInMissingFolders() {
        const QString path = m_dir.filePath(u"deep/er/knowledge.sqlite"_s);
        QString error;
        auto store = KnowledgeStore::open(path, &error);
        QVERIFY2(store, qPrintable(error));
        QVERIFY(
            store->record(record(u"s1"_s, 1, features(u"g"_s, 64, 4096, 4096), 128, 1.1), &error));
        store.reset();
        store = KnowledgeStore::open(path, &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->records(&error).size(), 1);
        QCOMPARE(store->stats(&error)->schemaVersion, KnowledgeStore::kSchemaVersion);
    }

    void migratesVersionOneKeepingEveryRow() {
        const QString path = freshPath();
        QStringList statements = kV1;
        statements << u"INSERT INTO measurements VALUES ('old', 3, '2026-11-30T09:00:00.000Z', "
                      "'gemm_old', 'gemm', 'A:f16,B:f16,C:f32', 128, 4096, 4096, 'NVIDIA H200', "
                      "132, '560.35.03', 'mma_sync', '%1', "
                      "'ok', 1.05, NULL, 'rejected', 'register spills')"_s.arg(kOldPlan);
        writeDatabase(path, statements);
        QString error;
        auto store = KnowledgeStore::open(path, &error);
        QVERIFY2(store, qPrintable(error));
        const auto all = store->records(&error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(all.size(), 1);
        const KnowledgeRecord& r = all.first();
        QCOMPARE(r.sessionId, u"old"_s);
        QCOMPARE(r.version, 3);
        QCOMPARE(r.decision, u"rejected"_s);
        QCOMPARE(r.reason, u"register spills"_s);
        QCOMPARE(r.origin, u"agent"_s); // the default the migration gives old rows
        QCOMPARE(r.editDiff, QString());
        QCOMPARE(*r.speedup, 1.05);
        QCOMPARE(r.plan.blockM, 128);
        store.reset();
        // The file is at the current version now, with the new index.
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(u"QSQLITE"_s, u"check"_s);
            db.setDatabaseName(path);
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec(u"SELECT version FROM schema_version"_s) && q.next());
            QCOMPARE(q.value(0).toInt(), KnowledgeStore::kSchemaVersion);
            QVERIFY(q.exec(u"SELECT name FROM sqlite_master WHERE type = 'index' AND name = "
                           "'measurements_task'"_s) &&
                    q.next());
            db.close();
        }
        QSqlDatabase::removeDatabase(u"check"_s);
        // A migrated store takes new records with the new fields.
        store = KnowledgeStore::open(path, &error);
        QVERIFY2(store, qPrintable(error));
        KnowledgeRecord edited =
            record(u"new"_s, 1, features(u"g"_s, 64, 4096, 4096), 64, 1.2, u"edited_approved"_s);
        edited.origin = u"human_code"_s;
        edited.editDiff = u"@@ -1,1 +1,1 @@\n-a\n+b"_s;
        QVERIFY(store->record(edited, &error));
        QCOMPARE(store->records(&error).size(), 2);
    }

    void refusesWithoutChanging_data() {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QStringList>("statements");
        QTest::addColumn<QString>("expected");
        QTest::newRow("text file") << QByteArray("name,speedup\ngemm,1.1\n") << QStringList()
                                   << u"not an SQLite database"_s;
        QTest::newRow("truncated header")
            << QByteArray("SQLite format") << QStringList() << u"not an SQLite database"_s;
        QTest::newRow("foreign database")
            << QByteArray() << QStringList{u"CREATE TABLE photos (id INTEGER, path TEXT)"_s}
            << u"not a Kevolve knowledge store (it has the tables photos"_s;
        QStringList newer = kV1;
        newer[1] = u"INSERT INTO schema_version (version) VALUES (7)"_s;
        QTest::newRow("newer schema")
            << QByteArray() << newer << u"schema version 7 is newer than this Kevolve"_s;
        QTest::newRow("empty version table")
            << QByteArray()
            << QStringList{u"CREATE TABLE schema_version (version INTEGER NOT NULL)"_s}
            << u"schema_version table is empty"_s;
        QTest::newRow("no measurements")
            << QByteArray()
            << QStringList{u"CREATE TABLE schema_version (version INTEGER NOT NULL)"_s,
                           u"INSERT INTO schema_version (version) VALUES (1)"_s}
            << u"damaged"_s;
    }

    void refusesWithoutChanging() {
        QFETCH(QByteArray, content);
        QFETCH(QStringList, statements);
        QFETCH(QString, expected);
        const QString path = freshPath();
        if (!statements.isEmpty()) {
            writeDatabase(path, statements);
        } else {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(content);
        }
        const QByteArray before = digest(path);
        QString error;
        auto store = KnowledgeStore::open(path, &error);
        QVERIFY(!store);
        QVERIFY2(error.contains(expected), qPrintable(error));
        QVERIFY2(error.contains(path), qPrintable(error));
        QVERIFY2(error.contains(u"left as it is"_s), qPrintable(error));
        QVERIFY(QFile::exists(path));
        QCOMPARE(digest(path), before);
    }

    void refusesAFolder() {
        QString error;
        QVERIFY(!KnowledgeStore::open(m_dir.path(), &error));
        QVERIFY2(error.contains(u"not a regular file"_s), qPrintable(error));
    }

    void resolvesThePath() {
        qputenv("KEVOLVE_KNOWLEDGE", "/tmp/from-env.sqlite");
        QCOMPARE(KnowledgeStore::resolvePath(u"/x/given.sqlite"_s), u"/x/given.sqlite"_s);
        QCOMPARE(KnowledgeStore::resolvePath(), u"/tmp/from-env.sqlite"_s);
        QCOMPARE(KnowledgeStore::resolvePath(u"off"_s), QString());
        qputenv("KEVOLVE_KNOWLEDGE", "off");
        QCOMPARE(KnowledgeStore::resolvePath(), QString());
        qunsetenv("KEVOLVE_KNOWLEDGE");
        const QString path = KnowledgeStore::resolvePath();
        QVERIFY2(path.endsWith(u"/kevolve/knowledge.sqlite"_s), qPrintable(path));
        QVERIFY2(!path.contains(u"kevolve/kevolve"_s), qPrintable(path)); // issue 17
        qputenv("KEVOLVE_KNOWLEDGE", "off");
    }

    void exportImportRoundTrip() {
        QString error;
        auto a = KnowledgeStore::open(freshPath(), &error);
        QVERIFY2(a, qPrintable(error));
        KnowledgeRecord rejected =
            record(u"s1"_s, 2, features(u"g1"_s, 64, 4096, 4096), 256, 0.7, u"rejected"_s);
        rejected.reason = u"spills registers; \"never\" this tile"_s;
        KnowledgeRecord floor = record(u"s2"_s, 1, features(u"g2"_s, 128, 4096, 4096), 64, 0.98);
        floor.percentOfFloor = 71.5;
        floor.status = u"ok"_s;
        KnowledgeRecord failed = record(u"s2"_s, 2, features(u"g2"_s, 128, 4096, 4096), 32, 0);
        failed.status = u"compile_error"_s;
        failed.speedup.reset();
        for (const auto& r : {record(u"s1"_s, 1, features(u"g1"_s, 64, 4096, 4096), 128, 1.1),
                              rejected, floor, failed})
            QVERIFY2(a->record(r, &error), qPrintable(error));
        const QByteArray text = exportOf(*a);
        QCOMPARE(text.count('\n'), 5); // the header and four records

        auto b = KnowledgeStore::open(freshPath(), &error);
        QVERIFY2(b, qPrintable(error));
        auto result = importText(*b, text, &error);
        QVERIFY2(result, qPrintable(error));
        QCOMPARE(result->added, 4);
        QVERIFY(b->records(&error) == a->records(&error));
        // Importing again adds nothing; the export is identical but for its date.
        result = importText(*b, text, &error);
        QVERIFY2(result, qPrintable(error));
        QCOMPARE(result->added, 0);
        QCOMPARE(result->unchanged, 4);
        QCOMPARE(b->records(&error).size(), 4);
        QCOMPARE(exportOf(*b).mid(text.indexOf('\n')), text.mid(text.indexOf('\n')));
    }

    void importTakesTheLaterDecision() {
        QString error;
        auto store = KnowledgeStore::open(freshPath(), &error);
        QVERIFY2(store, qPrintable(error));
        KnowledgeRecord pending =
            record(u"s"_s, 1, features(u"g"_s, 64, 4096, 4096), 128, 1.0, u"pending"_s);
        QVERIFY(store->record(pending, &error));
        KnowledgeRecord decided = pending;
        decided.decision = u"rejected"_s;
        decided.reason = u"nondeterministic"_s;
        decided.recordedAt = pending.recordedAt.addSecs(600);
        QByteArray text = "{\"format\":\"kevolve-knowledge\",\"format_version\":1}\n";
        text += QJsonDocument(decided.toJson()).toJson(QJsonDocument::Compact) + '\n';
        auto result = importText(*store, text, &error);
        QVERIFY2(result, qPrintable(error));
        QCOMPARE(result->updated, 1);
        QCOMPARE(store->records(&error).first().decision, u"rejected"_s);
        // An older copy does not undo it.
        text = "{\"format\":\"kevolve-knowledge\",\"format_version\":1}\n" +
               QJsonDocument(pending.toJson()).toJson(QJsonDocument::Compact) + '\n';
        result = importText(*store, text, &error);
        QVERIFY2(result, qPrintable(error));
        QCOMPARE(result->unchanged, 1);
        QCOMPARE(store->records(&error).first().decision, u"rejected"_s);
    }

    void importRefusesBadLines_data() {
        QTest::addColumn<QString>("mutation");
        QTest::addColumn<QString>("expected");
        QTest::newRow("not json") << u"garbage"_s << u"line 3: not a JSON object"_s;
        QTest::newRow("missing field") << u"drop:status"_s << u"line 3: status: missing"_s;
        QTest::newRow("wrong type")
            << u"task.m=\"big\""_s << u"line 3: task.m: expected an integer"_s;
        QTest::newRow("negative extent")
            << u"task.n=-4"_s << u"line 3: task.n: expected an integer"_s;
        QTest::newRow("unknown field") << u"extra=1"_s << u"line 3: extra: unknown field"_s;
        QTest::newRow("bad decision")
            << u"decision=\"maybe\""_s << u"line 3: decision: \"maybe\" is not one of"_s;
        QTest::newRow("bad speedup")
            << u"speedup=-1"_s << u"line 3: speedup: expected a number >= 0 or null"_s;
        QTest::newRow("bad date") << u"recorded_at=\"yesterday\""_s
                                  << u"line 3: recorded_at: not an ISO 8601"_s;
        QTest::newRow("family mismatch")
            << u"family=\"wmma\""_s << u"line 3: plan.family: \"mma_sync\" differs"_s;
        QTest::newRow("bad plan") << u"plan={\"family\":\"mma_sync\",\"block_m\":\"wide\"}"_s
                                  << u"line 3: plan: "_s;
        QTest::newRow("no header") << u"noheader"_s << u"line 1: format: expected the header"_s;
        QTest::newRow("newer format") << u"header={\"format\":\"kevolve-knowledge\","
                                         "\"format_version\":9}"_s
                                      << u"line 1: format_version: 9 is newer"_s;
    }

    void importRefusesBadLines() {
        QFETCH(QString, mutation);
        QFETCH(QString, expected);
        QString error;
        auto store = KnowledgeStore::open(freshPath(), &error);
        QVERIFY2(store, qPrintable(error));
        QVERIFY(store->record(record(u"kept"_s, 1, features(u"g"_s, 64, 4096, 4096), 128, 1.1),
                              &error));
        QByteArray header = "{\"format\":\"kevolve-knowledge\",\"format_version\":1}";
        QJsonObject good = record(u"x"_s, 1, features(u"g"_s, 64, 4096, 4096), 64, 1.0).toJson();
        QJsonObject bad = record(u"x"_s, 2, features(u"g"_s, 64, 4096, 4096), 32, 1.0).toJson();
        QByteArray badLine;
        if (mutation == u"garbage") {
            badLine = "{\"session_id\": ";
        } else if (mutation.startsWith(u"drop:")) {
            bad.remove(mutation.mid(5));
        } else if (mutation == u"noheader") {
            header = QJsonDocument(good).toJson(QJsonDocument::Compact);
        } else if (mutation.startsWith(u"header=")) {
            header = mutation.mid(7).toUtf8();
        } else {
            const qsizetype eq = mutation.indexOf(u'=');
            const QString field = mutation.left(eq);
            const QJsonValue value =
                QJsonDocument::fromJson("[" + mutation.mid(eq + 1).toUtf8() + "]").array().at(0);
            if (field.startsWith(u"task.")) {
                QJsonObject task = bad.value(u"task"_s).toObject();
                task.insert(field.mid(5), value);
                bad.insert(u"task"_s, task);
            } else {
                bad.insert(field, value);
            }
        }
        if (badLine.isEmpty())
            badLine = QJsonDocument(bad).toJson(QJsonDocument::Compact);
        const QByteArray text = header + '\n' + QJsonDocument(good).toJson(QJsonDocument::Compact) +
                                '\n' + badLine + '\n';
        QVERIFY(!importText(*store, text, &error));
        QVERIFY2(error.startsWith(expected), qPrintable(error));
        // Nothing of the file was imported, and nothing stored was lost.
        const auto all = store->records(&error);
        QCOMPARE(all.size(), 1);
        QCOMPARE(all.first().sessionId, u"kept"_s);
    }

    void ranksTheNearestSolvedTasks() {
        QString error;
        auto store = KnowledgeStore::open(freshPath(), &error);
        QVERIFY2(store, qPrintable(error));
        const TaskFeatures query = features(u"new"_s, 96, 4096, 11008);
        const QVector<KnowledgeRecord> rows = {
            // Far in M: 64x farther than the others.
            record(u"far"_s, 1, features(u"gemm_m8192"_s, 8192, 4096, 11008), 256, 1.3),
            // Near (M 64), two configurations: the better one first.
            record(u"near"_s, 1, features(u"gemm_m64"_s, 64, 4096, 11008), 64, 0.9),
            record(u"near"_s, 2, features(u"gemm_m64"_s, 64, 4096, 11008), 128, 1.12),
            // The nearest shape (M 128) on another GPU: one octave of penalty puts it behind.
            record(u"other_gpu"_s, 1,
                   features(u"gemm_m128_a100"_s, 128, 4096, 11008, u"NVIDIA A100"_s), 128, 1.5),
            // Rejected, failed and other dtypes never come back as a starting point.
            record(u"near"_s, 3, features(u"gemm_m64"_s, 64, 4096, 11008), 256, 2.0, u"rejected"_s),
            record(u"bf16"_s, 1,
                   features(u"gemm_bf16"_s, 96, 4096, 11008, u"NVIDIA H200"_s,
                            u"A:bf16,B:bf16,C:f32"_s),
                   128, 1.4),
        };
        for (const auto& r : rows)
            QVERIFY2(store->record(r, &error), qPrintable(error));
        // A rejection on a far task does not carry here.
        QVERIFY(store->record(record(u"far"_s, 2, features(u"gemm_m8192"_s, 8192, 4096, 11008), 64,
                                     1.0, u"rejected"_s),
                              &error));
        KnowledgeRecord failed =
            record(u"mid"_s, 1, features(u"gemm_m96"_s, 96, 4096, 11008), 32, 0);
        failed.status = u"incorrect"_s;
        QVERIFY(store->record(failed, &error));

        const KnowledgeHints hints = store->hints(query);
        QCOMPARE(hints.priors.size(), 4);
        QCOMPARE(hints.priors.at(0).task.taskName, u"gemm_m64"_s);
        QCOMPARE(hints.priors.at(0).speedup, 1.12);
        QCOMPARE(hints.priors.at(0).plan.blockM, 128);
        QCOMPARE(hints.priors.at(1).task.taskName, u"gemm_m64"_s);
        QCOMPARE(hints.priors.at(1).speedup, 0.9);
        QCOMPARE(hints.priors.at(2).task.taskName, u"gemm_m128_a100"_s);
        QCOMPARE(hints.priors.at(3).task.taskName, u"gemm_m8192"_s);
        QVERIFY(hints.priors.at(0).distance < hints.priors.at(2).distance);
        QVERIFY(hints.priors.at(2).distance < hints.priors.at(3).distance);
        QVERIFY2(hints.priors.at(0).citation().startsWith(
                     u"from gemm_m64 on NVIDIA H200: 1.12x, 2026-12-01"_s),
                 qPrintable(hints.priors.at(0).citation()));
        // The rejection is a decision near the task, with its reason.
        QCOMPARE(hints.decisions.size(), 1);
        QCOMPARE(hints.decisions.first().kind, KnowledgeDecision::Kind::Rejected);
        QCOMPARE(hints.decisions.first().plan.blockM, 256);
        // Fewer tasks when asked.
        QCOMPARE(store->hints(query, 1, 1).priors.size(), 1);
        // Another op knows nothing.
        TaskFeatures softmax = query;
        softmax.op = u"softmax"_s;
        QVERIFY(store->hints(softmax).isEmpty());
    }

    void distanceNeedsTheSameOpAndTypes() {
        const TaskFeatures a = features(u"a"_s, 64, 4096, 4096);
        QCOMPARE(*featureDistance(a, a), 0.0);
        TaskFeatures b = a;
        b.m = 129; // one octave: (129 + 1) / (64 + 1)
        QVERIFY(qAbs(*featureDistance(a, b) - 1.0) < 1e-9);
        b = a;
        b.smCount = 114;
        QCOMPARE(*featureDistance(a, b), 0.5);
        b.deviceName = u"NVIDIA H100"_s;
        QCOMPARE(*featureDistance(a, b), 1.0);
        b = a;
        b.dtypes = u"A:f32,B:f32,C:f32"_s;
        QVERIFY(!featureDistance(a, b));
    }

    void lineDiffShowsTheEdit() {
        const QString before = u"a\nb\nc\nd\ne\nf\ng"_s;
        const QString after = u"a\nb\nC\nd\ne\nf\ng\nh"_s;
        QCOMPARE(lineDiff(before, after),
                 u"@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n@@ -7,1 +7,2 @@\n g\n+h"_s);
        QCOMPARE(lineDiff(before, before), QString());
    }
};

QTEST_GUILESS_MAIN(TestKnowledgeStore)
#include "tst_knowledgestore.moc"
