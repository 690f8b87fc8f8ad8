// SessionStore: steps round-trip through the folder, crash leftovers are kept and repaired only by
// appending, and a 1,000-step session opens in under a second. The damaged sessions of issue 24
// are in tst_sessiondamage.
#include "sessionstore.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace kev;

namespace {

Task task() {
    QString error;
    auto t = TaskLibrary().resolve(QStringLiteral("gemm_fp16_fp32_4096"), &error);
    if (!t)
        qFatal("%s", qPrintable(error));
    return *t;
}

Candidate candidate(int version, double speedup, bool suspicious = false) {
    Candidate c;
    c.version = version;
    c.parentVersion = version - 1;
    c.iteration = version;
    c.strategy.family = QStringLiteral("fma_tiled");
    c.strategy.warps = 4;
    c.strategy.rationale = QStringLiteral("plan ") + QString::number(version);
    c.source = QStringLiteral("// kernel ") + QString::number(version) + u'\n';
    QJsonObject report{
        {QStringLiteral("schema_version"), 1},
        {QStringLiteral("status"), QStringLiteral("ok")},
        {QStringLiteral("suspicious"), suspicious},
        {QStringLiteral("message"), QStringLiteral("fine")},
        {QStringLiteral("compile"), QJsonObject{{QStringLiteral("ok"), true}}},
        {QStringLiteral("timing"), QJsonObject{{QStringLiteral("speedup_vs_reference"), speedup},
                                               {QStringLiteral("median_ms"), 0.2 / speedup},
                                               {QStringLiteral("reference_median_ms"), 0.2}}}};
    QString error;
    c.report = EvaluationReport::fromJson(report, &error);
    ReviewFeedback review;
    review.compileOk = true;
    review.correct = true;
    review.status = QStringLiteral("ok");
    review.speedup = speedup;
    review.bottleneckId = QStringLiteral("memory_bound");
    review.blame = QStringLiteral("implementation");
    review.suggestions = {QStringLiteral("more stages")};
    c.review = review;
    AgentTurn turn;
    turn.role = QStringLiteral("coder");
    turn.backend = QStringLiteral("scripted");
    turn.prompt = QStringLiteral("write it");
    turn.reply = c.source;
    c.turns = {turn};
    c.finishedAt = QDateTime::currentDateTimeUtc();
    return c;
}

} // namespace

class TestSessionStore : public QObject {
    Q_OBJECT
private slots:
    void createAppendReopen() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("s"));
        QString error;
        auto store = SessionStore::create(path, task(), EngineSettings(), &error);
        QVERIFY2(store, qPrintable(error));
        QVERIFY(store->appendStep(candidate(1, 0.5), &error));
        QVERIFY(store->appendStep(candidate(2, 0.8), &error));
        QVERIFY(store->appendStep(candidate(3, 1.5, true), &error));
        QVERIFY(!store->appendStep(candidate(2, 0.9), &error));
        QVERIFY2(error.contains(QStringLiteral("already in the session")), qPrintable(error));

        QVERIFY(!SessionStore::create(path, task(), EngineSettings(), &error));
        QVERIFY2(error.contains(QStringLiteral("already holds a session")), qPrintable(error));

        const auto reopened = SessionStore::open(path, &error);
        QVERIFY2(reopened, qPrintable(error));
        QCOMPARE(reopened->steps().size(), 3);
        QCOMPARE(reopened->nextVersion(), 4);
        QCOMPARE(reopened->task().name, QStringLiteral("gemm_fp16_fp32_4096"));
        // The suspicious 1.5x is not the best; the trustworthy 0.8x is.
        QCOMPARE(reopened->bestVersion(), std::optional<int>(2));
        const auto c = reopened->loadCandidate(2, &error);
        QVERIFY2(c, qPrintable(error));
        QCOMPARE(c->source, candidate(2, 0.8).source);
        QCOMPARE(c->strategy, candidate(2, 0.8).strategy);
        QCOMPARE(c->report->speedup, 0.8);
        QCOMPARE(c->review->bottleneckId, QStringLiteral("memory_bound"));
        QCOMPARE(c->turns.size(), 1);
        QCOMPARE(c->turns.first().prompt, QStringLiteral("write it"));
        QVERIFY(QFile::exists(reopened->planPath(1)));
        QVERIFY(QFile::exists(reopened->kernelPath(1)));
        QVERIFY(QFile::exists(reopened->logPath(1)));
        QVERIFY(!reopened->loadCandidate(9, &error));
        QVERIFY2(error.contains(QStringLiteral("no step v9")), qPrintable(error));
    }

    void approvedSuspiciousCanBeBest() {
        QTemporaryDir dir;
        QString error;
        auto store = SessionStore::create(dir.path(), task(), EngineSettings(), &error);
        QVERIFY(store);
        QVERIFY(store->appendStep(candidate(1, 0.8), &error));
        Candidate approved = candidate(2, 1.3, true);
        approved.decision = Decision{Decision::Kind::Approved, QString()};
        QVERIFY(store->appendStep(approved, &error));
        QCOMPARE(store->bestVersion(), std::optional<int>(2));
    }

    void crashLeftoversAreKeptAndRepairedByAppending() {
        QTemporaryDir dir;
        QString error;
        {
            auto store = SessionStore::create(dir.path(), task(), EngineSettings(), &error);
            QVERIFY(store);
            QVERIFY(store->appendStep(candidate(1, 0.5), &error));
            QVERIFY(store->appendStep(candidate(2, 0.6), &error));
        }
        // A crash while appending v3's record, after only its kernel was written.
        const QString indexPath = QDir(dir.path()).filePath(QStringLiteral("index.jsonl"));
        QFile index(indexPath);
        QVERIFY(index.open(QIODevice::Append));
        index.write("{\"version\":3,\"status\":\"o");
        index.close();
        QFile orphan(QDir(dir.path()).filePath(QStringLiteral("generated/kernel_v3.cu")));
        QVERIFY(orphan.open(QIODevice::WriteOnly));
        orphan.write("// half a step");
        orphan.close();

        auto store = SessionStore::open(dir.path(), &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->steps().size(), 2);
        QCOMPARE(store->problems().size(), 1);
        QVERIFY(store->problems().first().cut);
        QCOMPARE(store->problems().first().line, 3);
        QCOMPARE(store->unrecordedVersions(), QVector<int>{3});
        // v3's files are kept and its version is never reused.
        QCOMPARE(store->nextVersion(), 4);
        QVERIFY(store->canWrite(&error));
        QVERIFY2(store->appendStep(candidate(4, 0.7), &error), qPrintable(error));
        QCOMPARE(orphan.size(), qint64(14));
        const auto again = SessionStore::open(dir.path(), &error);
        QVERIFY2(again, qPrintable(error));
        QCOMPARE(again->steps().size(), 3);
        QCOMPARE(again->loadSource(4, &error), std::optional<QString>(candidate(4, 0.7).source));
        // The cut line stays as written, ended and named by a repair record; it no longer blocks.
        QCOMPARE(again->problems().size(), 1);
        QVERIFY(again->problems().first().repaired);
        QVERIFY(again->canWrite(&error));
        QFile reread(indexPath);
        QVERIFY(reread.open(QIODevice::ReadOnly));
        QVERIFY(reread.readAll().contains("{\"version\":3,\"status\":\"o\n"));
    }

    void strayFilesAreNeverRemoved() {
        QTemporaryDir dir;
        QString error;
        {
            auto store = SessionStore::create(dir.path(), task(), EngineSettings(), &error);
            QVERIFY(store->appendStep(candidate(1, 0.5), &error));
        }
        const QString stray = QDir(dir.path()).filePath(QStringLiteral("logs/run_v7.json"));
        QFile file(stray);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{}");
        file.close();
        auto store = SessionStore::open(dir.path(), &error);
        QCOMPARE(store->nextVersion(), 8);
        QVERIFY(store->appendStep(candidate(8, 0.5), &error));
        QVERIFY(QFile::exists(stray));
        QVERIFY(QFile::exists(store->logPath(1)));
    }

    void corruptIndexLineOpensButRefusesWrites() {
        QTemporaryDir dir;
        QString error;
        {
            auto store = SessionStore::create(dir.path(), task(), EngineSettings(), &error);
            QVERIFY(store->appendStep(candidate(1, 0.5), &error));
        }
        QFile index(QDir(dir.path()).filePath(QStringLiteral("index.jsonl")));
        const qint64 before = index.size();
        QVERIFY(index.open(QIODevice::Append));
        index.write("garbage\n");
        index.close();
        auto store = SessionStore::open(dir.path(), &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->steps().size(), 1);
        QCOMPARE(store->problems().size(), 1);
        QCOMPARE(store->problems().first().line, 2);
        QCOMPARE(store->problems().first().byte, before);
        QVERIFY(!store->appendStep(candidate(2, 0.5), &error));
        QVERIFY2(error.contains(QStringLiteral("index.jsonl line 2 (byte ") +
                                QString::number(before) + u')'),
                 qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("every file is kept")), qPrintable(error));
        QVERIFY(!QFile::exists(store->logPath(2)));
    }

    void notASession() {
        QTemporaryDir dir;
        QString error;
        QVERIFY(!SessionStore::open(dir.path(), &error));
        QVERIFY2(error.contains(QStringLiteral("not a Kevolve session")), qPrintable(error));
    }

    void opensThousandStepsWithinASecond() {
        QTemporaryDir dir;
        QString error;
        {
            auto store = SessionStore::create(dir.path(), task(), EngineSettings(), &error);
            QVERIFY(store);
            Candidate big = candidate(1, 0.5);
            big.turns.first().prompt = QString(20000, u'x');
            for (int v = 1; v <= 1000; ++v) {
                big.version = v;
                big.iteration = v;
                big.report->speedup = 0.5 + v * 1e-4;
                QVERIFY2(store->appendStep(big, &error), qPrintable(error));
            }
        }
        QElapsedTimer timer;
        timer.start();
        const auto store = SessionStore::open(dir.path(), &error);
        const qint64 ms = timer.elapsed();
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->steps().size(), 1000);
        QCOMPARE(store->bestVersion(), std::optional<int>(1000));
        qInfo("opening a synthetic 1000-iteration session took %lld ms", ms);
        QVERIFY2(ms <= 1000, qPrintable(QString::number(ms) + QStringLiteral(" ms")));
    }
};

QTEST_GUILESS_MAIN(TestSessionStore)
#include "tst_sessionstore.moc"
