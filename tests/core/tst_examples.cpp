// Example sessions are found without an environment variable: in the installed layout
// (<prefix>/bin next to <prefix>/share/kevolve/examples), in the build tree (the build copies
// resources/examples to <build>/share/kevolve/examples) and through $KEVOLVE_EXAMPLES.
#include "examples.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace kev;

namespace {

void makeSession(const QString& dir) {
    QVERIFY(QDir().mkpath(dir));
    QFile f(dir + QStringLiteral("/session.json"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{}");
}

} // namespace

class TstExamples : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QTemporaryDir m_noData; // XDG_DATA_DIRS / XDG_DATA_HOME: an installed package must not answer

private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        qunsetenv("KEVOLVE_EXAMPLES");
        qputenv("XDG_DATA_DIRS", m_noData.path().toUtf8());
        qputenv("XDG_DATA_HOME", m_noData.path().toUtf8());
    }

    void installedLayout() {
        const QString prefix = m_tmp.filePath(QStringLiteral("usr"));
        const QString examples = prefix + QStringLiteral("/share/kevolve/examples");
        makeSession(examples + QStringLiteral("/h200_gemm"));
        makeSession(examples + QStringLiteral("/a_softmax"));
        QVERIFY(QDir().mkpath(examples + QStringLiteral("/not_a_session")));
        QVERIFY(QDir().mkpath(prefix + QStringLiteral("/bin")));
        const QString found = exampleSessionsDirFrom(prefix + QStringLiteral("/bin"));
        QCOMPARE(found, examples);
        QCOMPARE(exampleSessionsIn(found), QStringList({examples + QStringLiteral("/a_softmax"),
                                                        examples + QStringLiteral("/h200_gemm")}));
    }

    void buildTreeLayout() {
        const QString build = m_tmp.filePath(QStringLiteral("build/release"));
        const QString examples = build + QStringLiteral("/share/kevolve/examples");
        makeSession(examples + QStringLiteral("/h200_gemm"));
        const QString gui = build + QStringLiteral("/app/kevolve");
        QVERIFY(QDir().mkpath(gui));
        QCOMPARE(exampleSessionsDirFrom(gui), examples);
        QCOMPARE(exampleSessionsDirFrom(build + QStringLiteral("/app")), examples);
    }

    void nothingFoundIsEmpty() {
        const QString lonely = m_tmp.filePath(QStringLiteral("a/b/c/d/e/bin"));
        QVERIFY(QDir().mkpath(lonely));
        QCOMPARE(exampleSessionsDirFrom(lonely), QString());
        QCOMPARE(exampleSessionsDirFrom(QString()), QString());
        QVERIFY(exampleSessionsIn(QString()).isEmpty());
        QVERIFY(exampleSessionsIn(m_tmp.filePath(QStringLiteral("missing"))).isEmpty());
    }

    void environmentOverrides() {
        const QString other = m_tmp.filePath(QStringLiteral("elsewhere/one_session"));
        makeSession(other);
        qputenv("KEVOLVE_EXAMPLES", other.toUtf8());
        const QString found = exampleSessionsDirFrom(m_tmp.filePath(QStringLiteral("usr/bin")));
        qunsetenv("KEVOLVE_EXAMPLES");
        QCOMPARE(found, other);
        // A single session given directly is its own list.
        QCOMPARE(exampleSessionsIn(found), QStringList({other}));
        // An override naming nothing falls through to the normal search.
        qputenv("KEVOLVE_EXAMPLES", m_tmp.filePath(QStringLiteral("missing")).toUtf8());
        const QString fallback = exampleSessionsDirFrom(m_tmp.filePath(QStringLiteral("usr/bin")));
        qunsetenv("KEVOLVE_EXAMPLES");
        QCOMPARE(fallback, m_tmp.filePath(QStringLiteral("usr/share/kevolve/examples")));
    }

    // This test program runs from the build tree: the build's copy of resources/examples answers,
    // not the source tree (opening an example must never write into the checkout).
    void thisBuildTreeHasTheH200Example() {
        const QString dir = exampleSessionsDir();
        QVERIFY2(!dir.isEmpty(), qPrintable(QStringLiteral("no share/kevolve/examples above ") +
                                            QCoreApplication::applicationDirPath()));
        QVERIFY2(!dir.startsWith(QDir::cleanPath(QStringLiteral(KEV_SOURCE_DIR "/resources"))),
                 qPrintable(dir));
        bool h200 = false;
        for (const QString& s : exampleSessions())
            h200 = h200 || s.endsWith(QStringLiteral("/h200_gemm_fp16_fp32_4096"));
        QVERIFY2(h200, qPrintable(exampleSessions().join(QLatin1Char(' '))));
    }
};

QTEST_GUILESS_MAIN(TstExamples)
#include "tst_examples.moc"
