// The diff view on two known kernels (tests/widgets/data/kernel_a.cu and kernel_b.cu).
#include "fixtures.h"

#include "diffview.h"
#include "textdiff.h"

#include <QPlainTextEdit>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace kev;

class DiffTest : public QObject {
    Q_OBJECT
private slots:
    void linesAlign();
    void knownKernels();
    void identicalCandidates();
};

void DiffTest::linesAlign() {
    const auto rows = diffLines(u"a\nb\nc\nd\n"_s, u"a\nB\nc\nd\ne\n"_s);
    QCOMPARE(rows.size(), 5);
    QCOMPARE(rows[0].kind, DiffRow::Kind::Same);
    QCOMPARE(rows[1].kind, DiffRow::Kind::Changed);
    QCOMPARE(rows[1].left, u"b"_s);
    QCOMPARE(rows[1].right, u"B"_s);
    QCOMPARE(rows[1].leftLine, 2);
    QCOMPARE(rows[1].rightLine, 2);
    QCOMPARE(rows[4].kind, DiffRow::Kind::Added);
    QCOMPARE(rows[4].leftLine, 0);
    QCOMPARE(rows[4].rightLine, 5);

    const auto removed = diffLines(u"x\ny\nz"_s, u"x\nz"_s);
    QCOMPARE(removed.size(), 3);
    QCOMPARE(removed[1].kind, DiffRow::Kind::Removed);
    QCOMPARE(removed[1].left, u"y"_s);
    QCOMPARE(removed[2].leftLine, 3);
    QCOMPARE(removed[2].rightLine, 2);
}

void DiffTest::knownKernels() {
    Candidate a;
    a.version = 1;
    a.source = kev::test::readText(u"kernel_a.cu"_s);
    a.strategy.family = u"fma_tiled"_s;
    a.strategy.blockM = 32;
    a.strategy.blockN = 32;
    a.strategy.blockK = 32;
    a.report = kev::test::report(u"report_unstable.json"_s);
    Candidate b = a;
    b.version = 2;
    b.source = kev::test::readText(u"kernel_b.cu"_s);
    b.strategy.family = u"fma_regblock"_s;
    b.strategy.blockM = 128;
    b.strategy.smemLayout = u"padded"_s;
    b.strategy.smemPaddingBytes = 4;
    b.strategy.params.insert(u"rows_per_thread"_s, 4);
    b.report = kev::test::report(u"report_ok_gemm_panels.json"_s);

    DiffView view;
    view.setCandidates(a, b);
    const auto rows = view.rows();
    const int leftLines = int(a.source.count(u'\n'));
    const int rightLines = int(b.source.count(u'\n'));
    // Every line of each side appears once, in order.
    int lastLeft = 0, lastRight = 0, lefts = 0, rights = 0;
    for (const auto& r : rows) {
        if (r.leftLine > 0) {
            QVERIFY(r.leftLine > lastLeft);
            lastLeft = r.leftLine;
            ++lefts;
        }
        if (r.rightLine > 0) {
            QVERIFY(r.rightLine > lastRight);
            lastRight = r.rightLine;
            ++rights;
        }
    }
    QCOMPARE(lefts, leftLines);
    QCOMPARE(rights, rightLines);

    const auto rowWith = [&rows](const QString& text) -> const DiffRow* {
        for (const auto& r : rows) {
            if (r.left.contains(text) || r.right.contains(text))
                return &r;
        }
        return nullptr;
    };
    QCOMPARE(rowWith(u"constexpr int kRows = 4;"_s)->kind, DiffRow::Kind::Added);
    QCOMPARE(rowWith(u"__shared__ float tileB"_s)->kind, DiffRow::Kind::Changed);
    QCOMPARE(rowWith(u"constexpr int kTile = 32;"_s)->kind, DiffRow::Kind::Same);
    QCOMPARE(rowWith(u"#include <cuda_fp16.h>"_s)->kind, DiffRow::Kind::Same);
    QVERIFY(view.changedLineCount() > 10);
    QCOMPARE(view.leftEditor()->document()->blockCount(), rows.size());
    QCOMPARE(view.rightEditor()->document()->blockCount(), rows.size());
    QCOMPARE(view.leftEditor()->extraSelections().size(), view.changedLineCount());

    QStringList fields;
    for (const auto& c : view.strategyChanges())
        fields << c.field + u'=' + c.before + u'>' + c.after;
    QVERIFY2(fields.contains(u"family=fma_tiled>fma_regblock"_s), qPrintable(fields.join(u", "_s)));
    QVERIFY2(fields.contains(u"block_m=32>128"_s), qPrintable(fields.join(u", "_s)));
    QVERIFY2(fields.contains(u"params.rows_per_thread=—>4"_s), qPrintable(fields.join(u", "_s)));
    for (const auto& f : fields)
        QVERIFY2(!f.startsWith(u"block_n="_s), qPrintable(f));

    QStringList deltas;
    for (const auto& d : view.metricDeltas())
        deltas << d.metric + u'=' + d.before + u'>' + d.after + u' ' + d.delta;
    QVERIFY2(deltas.contains(u"status=unstable>ok "_s), qPrintable(deltas.join(u", "_s)));
    QVERIFY2(deltas.contains(u"speed-up vs cuBLAS=0.610>0.874 +43.3 %"_s),
             qPrintable(deltas.join(u", "_s)));
    QVERIFY2(deltas.contains(u"registers=96>168 +75.0 %"_s), qPrintable(deltas.join(u", "_s)));

    // A task whose reference is the harness's own kernel names it instead of cuBLAS.
    view.setReferenceName(u"harness reference"_s);
    view.setCandidates(a, b);
    QStringList metrics;
    for (const auto& d : view.metricDeltas())
        metrics << d.metric;
    QVERIFY2(metrics.contains(u"speed-up vs harness reference"_s),
             qPrintable(metrics.join(u", "_s)));
    QVERIFY(!metrics.join(u' ').contains(u"cuBLAS"_s));
}

void DiffTest::identicalCandidates() {
    Candidate a;
    a.version = 1;
    a.source = kev::test::readText(u"kernel_a.cu"_s);
    DiffView view;
    view.setCandidates(a, a);
    QCOMPARE(view.changedLineCount(), 0);
    QVERIFY(view.strategyChanges().isEmpty());
    QVERIFY(view.leftEditor()->extraSelections().isEmpty());
}

QTEST_MAIN(DiffTest)
#include "tst_diff.moc"
