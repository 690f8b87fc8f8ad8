// The row-wise family's typed configuration: Strategy::params parsed once into enums, written
// back unchanged, and knob text that names no value kept for the constraint's message.
#include "builtin/rowwiseconfig.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace kev::rowwise;

class TstRowwiseConfig : public QObject {
    Q_OBJECT

private slots:
    void parsesEveryKnob() {
        kev::Strategy s;
        s.family = u"rowwise"_s;
        s.warps = 8;
        s.vectorWidth = 4;
        s.params = QJsonObject{{u"mapping"_s, u"block"_s},          {u"vectors_per_thread"_s, 8},
                               {u"stats"_s, u"shifted_one_pass"_s}, {u"ctas_per_sm"_s, 4},
                               {u"pipeline"_s, u"prefetch"_s},      {u"weights"_s, u"registers"_s}};
        const RowwiseConfig c = RowwiseConfig::fromStrategy(s);
        QCOMPARE(c.mapping, Mapping::Block);
        QCOMPARE(c.stats, Stats::ShiftedOnePass);
        QCOMPARE(c.pipeline, Pipeline::Prefetch);
        QCOMPARE(c.weights, Weights::Registers);
        QCOMPARE(c.vectorsPerThread, 8);
        QCOMPARE(c.ctasPerSm, 4);
        QCOMPARE(c.depth, 4); // absent: the ring's default, ignored by prefetch
        QCOMPARE(c.rowThreads(), 256);
        QCOMPARE(c.chunkElements(), 256LL * 4 * 8);
        QVERIFY(!c.invalid.mapping && !c.invalid.stats && !c.invalid.pipeline &&
                !c.invalid.weights);
        // Written back, the strategy is the same (no depth added for a pipeline without a ring).
        kev::Strategy back;
        back.params = QJsonObject{};
        c.applyTo(back);
        QCOMPARE(back.params, s.params);
        QCOMPARE(back.warps, 8);
        QCOMPARE(back.vectorWidth, 4);
    }

    void olderStrategiesReadAsOneRowAtATime() {
        kev::Strategy s;
        s.params = QJsonObject{{u"mapping"_s, u"warp"_s},
                               {u"vectors_per_thread"_s, 2},
                               {u"stats"_s, u"two_pass"_s},
                               {u"ctas_per_sm"_s, 0}};
        const RowwiseConfig c = RowwiseConfig::fromStrategy(s);
        QCOMPARE(c.pipeline, Pipeline::None);
        QCOMPARE(c.weights, Weights::Load);
        QVERIFY(!c.invalid.pipeline && !c.invalid.weights);
    }

    void unknownTextIsKeptForTheMessage() {
        kev::Strategy s;
        s.warps = 4;
        s.vectorWidth = 1;
        s.params = QJsonObject{{u"mapping"_s, u"diagonal"_s}, {u"vectors_per_thread"_s, 1},
                               {u"stats"_s, u""_s},           {u"ctas_per_sm"_s, 0},
                               {u"pipeline"_s, u"double"_s},  {u"weights"_s, u"smem"_s}};
        const RowwiseConfig c = RowwiseConfig::fromStrategy(s);
        QCOMPARE(c.invalid.mapping.value_or(u"-"_s), u"diagonal"_s);
        QCOMPARE(c.invalid.stats.value_or(u"-"_s), QString());
        QCOMPARE(c.invalid.pipeline.value_or(u"-"_s), u"double"_s);
        QCOMPARE(c.invalid.weights.value_or(u"-"_s), u"smem"_s);
        // A missing knob without a default (mapping, stats) is invalid too, as "".
        kev::Strategy bare;
        QCOMPARE(RowwiseConfig::fromStrategy(bare).invalid.mapping.value_or(u"-"_s), QString());
        // Saved back, the text is what the user wrote, not a silently corrected value.
        kev::Strategy back;
        c.applyTo(back);
        QCOMPARE(back.params.value(u"mapping"_s).toString(), u"diagonal"_s);
        QCOMPARE(back.params.value(u"pipeline"_s).toString(), u"double"_s);
    }

    void opsByEnum() {
        QCOMPARE(rowOpOf(u"softmax"_s), std::optional(RowOp::Softmax));
        QCOMPARE(rowOpOf(u"layernorm"_s), std::optional(RowOp::LayerNorm));
        QCOMPARE(rowOpOf(u"reduce"_s), std::optional(RowOp::Reduce));
        QCOMPARE(rowOpOf(u"rmsnorm"_s), std::optional(RowOp::RmsNorm));
        QCOMPARE(opName(RowOp::RmsNorm), u"rmsnorm"_s);
        QVERIFY(!rowOpOf(u"gemm"_s));
        QCOMPARE(opName(RowOp::LayerNorm), u"layernorm"_s);
    }
};

QTEST_GUILESS_MAIN(TstRowwiseConfig)
#include "tst_rowwiseconfig.moc"
