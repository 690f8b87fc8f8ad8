// The template renderer (core/texttemplate.h) and the built-in families' CUDA templates in the
// resource: the renderer's syntax and errors, and every template parses with names in the
// families' vocabulary.
#include "builtin/cudatemplates.h"
#include "texttemplate.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTest>

using namespace Qt::StringLiterals;

namespace {

std::optional<QString> render(const QString& text, const kev::TemplateValues& values,
                              QString* error = nullptr) {
    QString local;
    return kev::TextTemplate(text, u"t.cu"_s).render(values, error ? error : &local);
}

} // namespace

class TstTemplates : public QObject {
    Q_OBJECT

private slots:
    void placeholders() {
        kev::TemplateValues v;
        v.set(u"N"_s, 128).set(u"TYPE"_s, u"__half"_s);
        QCOMPARE(*render(u"constexpr int kN = ${N};\nusing T = ${TYPE};\n"_s, v),
                 u"constexpr int kN = 128;\nusing T = __half;\n"_s);
        // Values are inserted verbatim and never scanned again.
        v.set(u"TEXT"_s, u"${N}"_s);
        QCOMPARE(*render(u"a ${TEXT} b"_s, v), u"a ${N} b"_s);
    }

    void conditions() {
        kev::TemplateValues v;
        v.flag(u"ON"_s, true).flag(u"OFF"_s, false);
        // A directive alone on its line takes the line with it; inline ones only themselves.
        const QString text = u"a\n${if ON}\nb\n${else}\nc\n${endif}\n${if OFF}\nd\n${endif}\ne\n"_s;
        QCOMPARE(*render(text, v), u"a\nb\ne\n"_s);
        QCOMPARE(*render(u"x ${if ON}1${else}0${endif} ${if !ON}y${endif}z"_s, v), u"x 1 z"_s);
        QCOMPARE(*render(u"  ${if OFF}  \nskip\n  ${endif}\t\nkeep"_s, v), u"keep"_s);
        // Nested blocks; a branch not taken needs no values.
        QCOMPARE(
            *render(u"${if OFF}\n${MISSING}${if NOPE}\n${endif}\n${else}\nok\n${endif}\n"_s, v),
            u"ok\n"_s);
        // Comments document a template without reaching the output.
        QCOMPARE(*render(u"${# values: N (int)}\nint n;${# inline}\n"_s, v), u"int n;\n"_s);
        // A directive at the very start, and one at the end without a final newline.
        QCOMPARE(*render(u"${if ON}\nfirst\n${endif}"_s, v), u"first\n"_s);
    }

    void errors_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown placeholder")
            << u"a\nb ${NAME}"_s << u"t.cu line 2: no value for ${NAME}"_s;
        QTest::newRow("unknown condition")
            << u"${if X}\n${endif}\n"_s << u"line 1: no value for the condition X"_s;
        QTest::newRow("unclosed if")
            << u"a\n${if ON}\nb\n"_s << u"line 2: ${if} is not closed by ${endif}"_s;
        QTest::newRow("stray endif") << u"${endif}"_s << u"${endif} without ${if}"_s;
        QTest::newRow("stray else") << u"${else}"_s << u"${else} outside ${if}"_s;
        QTest::newRow("two elses")
            << u"${if ON}\n${else}\n${else}\n${endif}\n"_s << u"line 3: a second ${else}"_s;
        QTest::newRow("lower case") << u"${name}"_s << u"\"${name}\" is neither a placeholder"_s;
        QTest::newRow("unclosed") << u"x ${N\n}"_s
                                  << u"\"${\" is not closed by \"}\" on its line"_s;
        QTest::newRow("bad if") << u"${if a b}"_s << u"\"${if a b}\" is neither"_s;
    }

    void errors() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        kev::TemplateValues v;
        v.flag(u"ON"_s, true);
        QString error;
        QVERIFY(!render(text, v, &error));
        QVERIFY2(error.contains(expected), qPrintable(error));
        QVERIFY2(error.startsWith(u"template t.cu"_s), qPrintable(error));
    }

    void missingResource() {
        QString error;
        QVERIFY(!kev::TextTemplate::load(u":/builtin/templates/none.cu"_s)
                     .render(kev::TemplateValues(), &error));
        QVERIFY2(error.contains(u"none.cu"_s) && error.contains(u"cannot be read"_s),
                 qPrintable(error));
        // A family asking for a template that does not exist gets a kernel that cannot compile,
        // with the reason, never a silently shorter file.
        const QString code = kev::cudatemplates::render(u"none.cu"_s, kev::TemplateValues());
        QVERIFY2(code.startsWith(u"#error \""_s) && code.contains(u"none.cu"_s), qPrintable(code));
    }

    // The families' templates are in the resource, and every template there parses (names upper
    // case, blocks balanced) and stays under the 800 lines a source file may have.
    void resourceTemplates() {
        const QStringList names = kev::cudatemplates::names();
        for (const QString& name :
             {u"memory/vectors.cu"_s, u"gemm/launch_checks.cu"_s, u"rowwise/rowwise.cu"_s,
              u"rowwise/softmax.cu"_s, u"rowwise/layernorm.cu"_s, u"rowwise/reduce.cu"_s,
              u"wgmma/gemm.cu"_s})
            QVERIFY2(names.contains(name),
                     qPrintable(name + u" missing from "_s + names.join(u' ')));
        for (const QString& name : names) {
            const kev::TextTemplate t = kev::TextTemplate::load(kev::cudatemplates::path(name));
            QString error;
            t.names(&error);
            QVERIFY2(error.isEmpty(), qPrintable(name + u": "_s + error));
            QVERIFY2(!t.text().isEmpty(), qPrintable(name));
            QVERIFY2(t.text().count(u'\n') <= 800, qPrintable(name + u" is over 800 lines"_s));
        }
    }

    // templates.qrc lists every .cu under core/builtin/templates, and the resource holds the
    // files as they are in the source tree (a template added without its qrc line, or a stale
    // entry, fails here rather than as a missing template at generation time).
    void resourceMatchesSources() {
        const QDir root(QStringLiteral(KEV_TEMPLATES_DIR));
        QStringList onDisk;
        QDirIterator it(root.path(), {u"*.cu"_s}, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext())
            onDisk << root.relativeFilePath(it.next());
        onDisk.sort();
        QCOMPARE(kev::cudatemplates::names(), onDisk);
        for (const QString& name : onDisk) {
            QFile source(root.filePath(name));
            QFile resource(kev::cudatemplates::path(name));
            QVERIFY(source.open(QIODevice::ReadOnly) && resource.open(QIODevice::ReadOnly));
            QVERIFY2(source.readAll() == resource.readAll(), qPrintable(name));
        }
    }
};

QTEST_GUILESS_MAIN(TstTemplates)
#include "tst_templates.moc"
