// The memory-bound families (rowwise, gemv, elementwise) on the tasks of tests/builtin/tasks:
// task parsing, defaults, constraints per knob, and the generated code of each pipeline.
#include "builtintest.h"

using namespace Qt::StringLiterals;
using namespace kevtest;

class TestMemoryFamilies : public QObject {
    Q_OBJECT

private:
    // Sets `base` on the family's default for the task, then the row's knob, and expects the
    // row's problem.
    void rejectKnob(const QJsonObject& base) {
        QFETCH(QString, taskName);
        QFETCH(QString, familyId);
        QFETCH(QString, knob);
        QFETCH(QJsonValue, value);
        QFETCH(QString, expected);
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::Task t = memoryTask(taskName);
        const kev::KernelFamily& f = family(familyId);
        kev::Strategy s = f.defaultStrategy(t, h200);
        for (auto it = base.begin(); it != base.end(); ++it)
            s.params.insert(it.key(), it.value());
        QVERIFY2(f.constraints(s, t, h200).isEmpty(),
                 qPrintable(f.constraints(s, t, h200).join(u"; "_s)));
        bool found = false;
        const auto specs = f.parameters();
        for (const kev::ParameterSpec& spec : specs) {
            if (spec.name == knob) {
                spec.set(s, value);
                found = true;
            }
        }
        QVERIFY2(found, qPrintable(knob));
        const QStringList problems = f.constraints(s, t, h200);
        QVERIFY2(problems.join(u"; "_s).contains(expected), qPrintable(problems.join(u"; "_s)));
        // Another op's task is refused by name.
        QVERIFY(!f.constraints(s, task(u"gemm_fp16_fp32_4096"_s), h200).isEmpty());
    }

private slots:
    void memoryTasksParse() {
        const kev::Task softmax = memoryTask(u"softmax_f16_test"_s);
        QCOMPARE(softmax.op, u"softmax"_s);
        QCOMPARE(softmax.m, 8192);
        QCOMPARE(softmax.n, 8192);
        QCOMPARE(softmax.validationShapes.first().n, 1); // N need not be a multiple of 8
        QCOMPARE(softmax.minBytes(), 8192.0 * 8192 * 4);
        QCOMPARE(softmax.flops(), 5.0 * 8192 * 8192);
        const kev::Task layernorm = memoryTask(u"layernorm_f32_test"_s);
        QCOMPARE(layernorm.params.value(u"epsilon"_s).toDouble(), 1e-5); // the default
        QCOMPARE(layernorm.minBytes(), 16384.0 * 4096 * 8 + 4096.0 * 8);
        const kev::Task gemvT = memoryTask(u"gemv_t_f16_test"_s);
        QVERIFY(gemvT.params.value(u"transpose"_s).toBool());
        QCOMPARE(gemvT.dtypeOf(u"x"_s), u"f16"_s);
        const kev::Task reduce = memoryTask(u"reduce_sum_f16_test"_s);
        QCOMPARE(reduce.minBytes(), 16384.0 * 8192 * 2 + 16384.0 * 4);
        const kev::Task silu = memoryTask(u"elementwise_silu_f32_test"_s);
        QCOMPARE(silu.m, 1);
        QCOMPARE(silu.flops(), 4.0 * 67108864);
        // The harness gets the task exactly as written.
        QCOMPARE(silu.toJson().value(u"params"_s).toObject().value(u"function"_s).toString(),
                 u"silu"_s);
    }

    void memoryTaskErrorsNameTheField_data() {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("field");
        const QString head = uR"({"name": "t", "op": "%1", "dtypes": %2, "shape": %3)"_s;
        const QString rows = uR"({"X": "f32", "Y": "f32"})"_s;
        QTest::newRow("reduction") << head.arg(u"reduce"_s, rows, uR"({"M": 4, "N": 4})"_s) +
                                          uR"(, "params": {"reduction": "min"}})"_s
                                   << u"task.params.reduction"_s;
        QTest::newRow("unknown param") << head.arg(u"softmax"_s, rows, uR"({"M": 4, "N": 4})"_s) +
                                              uR"(, "params": {"axis": 1}})"_s
                                       << u"task.params.axis"_s;
        QTest::newRow("epsilon") << head.arg(
                                        u"layernorm"_s,
                                        uR"({"X": "f32", "W": "f32", "B": "f32", "Y": "f32"})"_s,
                                        uR"({"M": 4, "N": 4})"_s) +
                                        uR"(, "params": {"epsilon": 0}})"_s
                                 << u"task.params.epsilon"_s;
        QTest::newRow("missing tensor")
            << head.arg(u"gemv"_s, uR"({"A": "f16", "y": "f16"})"_s, uR"({"M": 4, "N": 4})"_s) +
                   u"}"_s
            << u"task.dtypes.x"_s;
        QTest::newRow("K for softmax")
            << head.arg(u"softmax"_s, rows, uR"({"M": 4, "N": 4, "K": 4})"_s) + u"}"_s
            << u"task.shape.K"_s;
        QTest::newRow("custom counts")
            << uR"({"name": "c", "op": "custom", "shape": {"L": 10}, "reference": {"file": "r.cu"}})"_s
            << u"task.counts"_s;
        QTest::newRow("custom reference")
            << uR"({"name": "c", "op": "custom", "shape": {"L": 10}, "counts": {"flops": 1, "min_bytes": 8}})"_s
            << u"task.reference"_s;
    }

    void memoryTaskErrorsNameTheField() {
        QFETCH(QString, json);
        QFETCH(QString, field);
        QString error;
        QVERIFY(!parse(json, &error));
        QVERIFY2(error.startsWith(field), qPrintable(error));
    }

    void memoryFamiliesServeOnlyTheirOps() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const QHash<QString, QString> expected{
            {u"softmax"_s, u"rowwise"_s}, {u"layernorm"_s, u"rowwise"_s},
            {u"rmsnorm"_s, u"rowwise"_s}, {u"reduce"_s, u"rowwise"_s},
            {u"gemv"_s, u"gemv"_s},       {u"elementwise"_s, u"elementwise"_s}};
        for (const QString& name : kMemoryTasks) {
            const kev::Task t = memoryTask(name);
            const auto families = kev::FamilyRegistry::instance().supporting(t, h200);
            QCOMPARE(families.size(), 1);
            QCOMPARE(families.first()->id(), expected.value(t.op));
            const kev::Strategy s = families.first()->defaultStrategy(t, h200);
            QVERIFY2(families.first()->constraints(s, t, h200).isEmpty(),
                     qPrintable(name + u": "_s +
                                families.first()->constraints(s, t, h200).join(u"; "_s)));
            QVERIFY2(s.validate().isEmpty(), qPrintable(s.validate().join(u"; "_s)));
            QVERIFY(!s.rationale.isEmpty());
        }
        const kev::Task gemm = task(u"gemm_fp16_fp32_4096"_s);
        for (const QString& id : {u"rowwise"_s, u"gemv"_s, u"elementwise"_s})
            QVERIFY(!family(id).supports(gemm, h200));
    }

    void memoryDefaultsCacheTheRow() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        // Softmax 8192 and layernorm 4096 rows fit in one block's registers: read once.
        for (const QString& name :
             {u"softmax_f32_test"_s, u"softmax_f16_test"_s, u"layernorm_bf16_test"_s}) {
            const kev::Task t = memoryTask(name);
            const kev::Strategy s = family(u"rowwise"_s).defaultStrategy(t, h200);
            const qint64 rowThreads =
                s.params.value(u"mapping"_s).toString() == u"block" ? s.warps * 32 : 32;
            QVERIFY2(rowThreads * s.vectorWidth * s.params.value(u"vectors_per_thread"_s).toInt() >=
                         t.n,
                     qPrintable(name));
            // 16-byte accesses, except the 16-bit rows of the prefetching kernels, which ran faster
            // in 8-byte ones (twice as many per thread; H200).
            QCOMPARE(s.vectorWidth * kev::Task::dtypeBytes(t.a),
                     name == u"softmax_f32_test"_s ? 16 : 8);
        }
    }

    void memoryConstraintsRejectImpossiblePoints_data() {
        QTest::addColumn<QString>("taskName");
        QTest::addColumn<QString>("familyId");
        QTest::addColumn<QString>("knob");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("32-byte access") << u"softmax_f32_test"_s << u"rowwise"_s << u"vectorWidth"_s
                                        << QJsonValue(8) << u"16 bytes"_s;
        QTest::newRow("too many cached")
            << u"layernorm_f32_test"_s << u"rowwise"_s << u"vectors_per_thread"_s << QJsonValue(16)
            << u"cached floats"_s;
        QTest::newRow("two-pass reduce") << u"reduce_max_f32_test"_s << u"rowwise"_s << u"stats"_s
                                         << QJsonValue(u"two_pass"_s) << u"one_pass"_s;
        QTest::newRow("one-warp block") << u"softmax_f16_test"_s << u"rowwise"_s << u"warps"_s
                                        << QJsonValue(1) << u"mapping=warp"_s;
        QTest::newRow("split y=Ax")
            << u"gemv_f16_test"_s << u"gemv"_s << u"split_m"_s << QJsonValue(4) << u"transpose"_s;
        QTest::newRow("unknown mapping") << u"softmax_f16_test"_s << u"rowwise"_s << u"mapping"_s
                                         << QJsonValue(u"grid"_s) << u"warp or block"_s;
        QTest::newRow("unknown pipeline")
            << u"layernorm_bf16_test"_s << u"rowwise"_s << u"pipeline"_s << QJsonValue(u"double"_s)
            << u"params.pipeline=\"double\": must be none, prefetch, async or bulk"_s;
        QTest::newRow("prefetch layernorm f32, no persistent grid")
            << u"layernorm_f32_test"_s << u"rowwise"_s << u"pipeline"_s << QJsonValue(u"prefetch"_s)
            << u"pipeline=prefetch needs a persistent grid to have a next row"_s;
        QTest::newRow("prefetch reduce")
            << u"reduce_max_f32_test"_s << u"rowwise"_s << u"pipeline"_s
            << QJsonValue(u"prefetch"_s)
            << u"pipeline=prefetch: implemented for layernorm, rmsnorm and softmax only, not reduce"_s;
        QTest::newRow("async softmax")
            << u"softmax_f16_test"_s << u"rowwise"_s << u"pipeline"_s << QJsonValue(u"async"_s)
            << u"pipeline=async: implemented for layernorm only, not softmax"_s;
        QTest::newRow("ctas_per_sm out of range")
            << u"layernorm_bf16_test"_s << u"rowwise"_s << u"ctas_per_sm"_s << QJsonValue(12)
            << u"params.ctas_per_sm=12: must be 0 to 8"_s;
        QTest::newRow("unknown stats")
            << u"layernorm_bf16_test"_s << u"rowwise"_s << u"stats"_s << QJsonValue(u"shifted"_s)
            << u"params.stats=\"shifted\": must be one_pass, two_pass or shifted_one_pass"_s;
        QTest::newRow("shifted one-pass softmax")
            << u"softmax_f16_test"_s << u"rowwise"_s << u"stats"_s
            << QJsonValue(u"shifted_one_pass"_s)
            << u"stats=shifted_one_pass: implemented for layernorm with pipeline=prefetch only "
               "(here softmax with pipeline=prefetch)"_s;
        QTest::newRow("shifted one-pass f32 one row at a time")
            << u"layernorm_f32_test"_s << u"rowwise"_s << u"stats"_s
            << QJsonValue(u"shifted_one_pass"_s) << u"(here layernorm with pipeline=none)"_s;
        QTest::newRow("unknown weights")
            << u"layernorm_f32_test"_s << u"rowwise"_s << u"weights"_s << QJsonValue(u"smem"_s)
            << u"params.weights=\"smem\": must be load or registers"_s;
        QTest::newRow("weights kept without prefetch")
            << u"softmax_f32_test"_s << u"rowwise"_s << u"weights"_s << QJsonValue(u"registers"_s)
            << u"pipeline=prefetch"_s;
        QTest::newRow("persistent too big")
            << u"elementwise_gelu_f16_test"_s << u"elementwise"_s << u"ctas_per_sm"_s
            << QJsonValue(16) << u"ctas_per_sm=16"_s;
    }

    void layernormKeepsRowsInFlightWhenTheRowFits() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        // bf16: the next row prefetched in registers, 4 blocks per SM, W and B in registers,
        // shifted one-pass statistics; p1 is the same point with two-pass statistics.
        const kev::Task bf16 = memoryTask(u"layernorm_bf16_test"_s);
        kev::Strategy p1 = rowwise.defaultStrategy(bf16, h200);
        QCOMPARE(p1.params.value(u"pipeline"_s).toString(), u"prefetch"_s);
        QCOMPARE(p1.params.value(u"weights"_s).toString(), u"registers"_s);
        QCOMPARE(p1.params.value(u"ctas_per_sm"_s).toInt(), 4);
        QCOMPARE(p1.params.value(u"stats"_s).toString(), u"shifted_one_pass"_s);
        p1.params.insert(u"stats"_s, u"two_pass"_s);
        QCOMPARE(p1.warps, 4);
        QCOMPARE(p1.params.value(u"vectors_per_thread"_s).toInt(), 8);
        QCOMPARE(p1.vectorWidth, 4);
        QVERIFY(!p1.params.contains(u"depth"_s));
        QVERIFY2(rowwise.constraints(p1, bf16, h200).isEmpty(),
                 qPrintable(rowwise.constraints(p1, bf16, h200).join(u"; "_s)));
        QVERIFY(p1.rationale.contains(u"persistent grid of 4 blocks per SM"_s));
        const QString p1Code = rowwise.generate(p1, bf16);
        QVERIFY(p1Code.contains(u"constexpr int CTAS_PER_SM = 4;"_s));
        QVERIFY(p1Code.contains(u"if (N == CHUNK)\n        layerNormRowsPrefetch<VPT><<<"_s));
        // Bounds-tested rows of whole vectors: the loads issued without a lane-divergent branch
        // (a vector past the row reads the row's first, filled once the row is used); rows of
        // a part vector stream.
        QVERIFY(p1Code.contains(
            u"else if (N <= CHUNK && N % VEC == 0)\n        layerNormRowsPrefetch<0><<<"_s));
        QVERIFY(p1Code.contains(u"loadVectors<INSIDE>(x, N, t, r.v);"_s));
        QVERIFY(p1Code.contains(u"fillPastRow<INSIDE>(current.v, N, t, current.first);"_s));
        QVERIFY(p1Code.contains(u"loadWeights<INSIDE>(W, B, N, t, weights);"_s));
        QVERIFY(p1Code.contains(u"PackedWeights"_s));
        QVERIFY(!p1Code.contains(u"layerNormRowsAsync"_s));

        // stats=shifted_one_pass: one pass, one block reduction of both sums, no reconversion of
        // the row before the normalisation.
        kev::Strategy b1 = p1;
        b1.params.insert(u"stats"_s, u"shifted_one_pass"_s);
        QVERIFY2(rowwise.constraints(b1, bf16, h200).isEmpty(),
                 qPrintable(rowwise.constraints(b1, bf16, h200).join(u"; "_s)));
        const QString b1Code = rowwise.generate(b1, bf16);
        QVERIFY(b1Code.contains(u"struct ShiftedSums"_s));
        QCOMPARE(b1Code.count(u"rowReduce(sums, sumsOf, phase)"_s), 1);
        QVERIFY(b1Code.contains(u"shifted one-pass statistics"_s));
        QVERIFY(!b1Code.contains(u"${"_s));
        QCOMPARE(p1Code.count(u"keepPacked(current);"_s), 2);
        QCOMPARE(b1Code.count(u"keepPacked(current);"_s), 0);
        QVERIFY(!p1Code.contains(u"ShiftedSums"_s));

        // The cp.async ring stays selectable: 4 rows per block.
        kev::Strategy s = p1;
        s.params.insert(u"pipeline"_s, u"async"_s);
        s.params.insert(u"depth"_s, 4);
        QVERIFY2(rowwise.constraints(s, bf16, h200).isEmpty(),
                 qPrintable(rowwise.constraints(s, bf16, h200).join(u"; "_s)));
        QCOMPARE(rowwise.resources(s, bf16, h200).smemBytesPerBlock, 4 * 4 * 128 * 16 + 4 * 24);
        const QString code = rowwise.generate(s, bf16);
        QVERIFY(code.contains(u"__launch_bounds__(THREADS, CTAS_PER_SM)"_s));
        QVERIFY(code.contains(u"constexpr int CTAS_PER_SM = 4;"_s));
        QVERIFY(code.contains(u"constexpr int DEPTH = 4;"_s));
        QVERIFY(code.contains(u"cp.async.cg.shared.global"_s));
        QVERIFY(code.contains(u"waitCopies<DEPTH - 1>();"_s));
        QVERIFY(code.contains(u"layerNormRowsAsync<<<grid, THREADS, RING_BYTES, stream>>>"_s));
        QVERIFY(code.contains(u"PackedWeights"_s));
        QVERIFY(!code.contains(u"layerNormRowsPrefetch"_s));
        QVERIFY(!code.contains(u"${"_s));
        // The ring's depth and W/B loading are generated as asked; 8-byte vectors copy with .ca.
        kev::Strategy d6 = s;
        d6.params.insert(u"depth"_s, 6);
        d6.params.insert(u"weights"_s, u"load"_s);
        d6.params.insert(u"ctas_per_sm"_s, 3);
        QVERIFY2(rowwise.constraints(d6, bf16, h200).isEmpty(),
                 qPrintable(rowwise.constraints(d6, bf16, h200).join(u"; "_s)));
        const QString d6Code = rowwise.generate(d6, bf16);
        QVERIFY(d6Code.contains(u"constexpr int DEPTH = 6;"_s));
        QVERIFY(!d6Code.contains(u"PackedWeights"_s));
        kev::Strategy narrow = s;
        narrow.vectorWidth = 4;
        narrow.params.insert(u"vectors_per_thread"_s, 8);
        QVERIFY2(rowwise.constraints(narrow, bf16, h200).isEmpty(),
                 qPrintable(rowwise.constraints(narrow, bf16, h200).join(u"; "_s)));
        const QString narrowCode = rowwise.generate(narrow, bf16);
        QVERIFY(narrowCode.contains(u"cp.async.ca.shared.global"_s));
        // Without cp.async (sm_75) the ring is refused; the default prefetches there too.
        kev::DeviceInfo turing = h200;
        turing.ccMajor = 7;
        turing.ccMinor = 5;
        const kev::Strategy old = rowwise.defaultStrategy(bf16, turing);
        QCOMPARE(old.params.value(u"pipeline"_s).toString(), u"prefetch"_s);
        QVERIFY(rowwise.constraints(s, bf16, turing)
                    .join(u"; "_s)
                    .contains(u"pipeline=async needs cp.async (sm_80 or newer)"_s));

        // f32 keeps the one-row-at-a-time kernel (faster than prefetch on the H200).
        const kev::Task f32 = memoryTask(u"layernorm_f32_test"_s);
        const kev::Strategy fs = rowwise.defaultStrategy(f32, h200);
        QCOMPARE(fs.params.value(u"pipeline"_s).toString(), u"none"_s);
        QCOMPARE(fs.params.value(u"ctas_per_sm"_s).toInt(), 0);
        QCOMPARE(fs.warps, 4);
        QCOMPARE(fs.params.value(u"vectors_per_thread"_s).toInt(), 8);
        QVERIFY(!fs.params.contains(u"depth"_s));
        const QString f32Code = rowwise.generate(fs, f32);
        QVERIFY(!f32Code.contains(u"layerNormRowsAsync"_s));
        QVERIFY(!f32Code.contains(u"layerNormRowsPrefetch"_s));

        // Prefetch stays selectable, with its own limits; it ignores depth.
        kev::Strategy pf = s;
        pf.params.insert(u"pipeline"_s, u"prefetch"_s);
        QVERIFY2(rowwise.constraints(pf, bf16, h200).isEmpty(),
                 qPrintable(rowwise.constraints(pf, bf16, h200).join(u"; "_s)));
        const QString pfCode = rowwise.generate(pf, bf16);
        QVERIFY(pfCode.contains(u"if (N == CHUNK)\n        layerNormRowsPrefetch<VPT><<<"_s));
        QVERIFY(!pfCode.contains(u"layerNormRowsAsync"_s));
        pf.params.insert(u"depth"_s, 9);
        QVERIFY(rowwise.constraints(pf, bf16, h200).isEmpty());
        pf.params.insert(u"vectors_per_thread"_s, 32); // 4-element vectors: 128 elements per thread
        const QString tooMany = rowwise.constraints(pf, bf16, h200).join(u"; "_s);
        QVERIFY2(tooMany.contains(u"pipeline=prefetch holds 256 packed registers per thread"_s),
                 qPrintable(tooMany));

        // The one-row-at-a-time kernel stays for f32 softmax, the other ops and rows that do not
        // fit.
        const kev::Task softmax = memoryTask(u"softmax_f32_test"_s);
        const kev::Strategy sm = rowwise.defaultStrategy(softmax, h200);
        QCOMPARE(sm.params.value(u"pipeline"_s).toString(), u"none"_s);
        QVERIFY(!rowwise.generate(sm, softmax).contains(u"Prefetch"_s));
        QString error;
        const auto wide =
            parse(uR"({"name": "wide", "op": "layernorm", "shape": {"M": 64, "N": 65536},
                 "dtypes": {"X": "bf16", "W": "bf16", "B": "bf16", "Y": "bf16"},
                 "alignment": {"leading_dim_multiple": 8}})"_s,
                  &error);
        QVERIFY2(wide, qPrintable(error));
        const kev::Strategy ws = rowwise.defaultStrategy(*wide, h200);
        QCOMPARE(ws.params.value(u"pipeline"_s).toString(), u"none"_s);
        QCOMPARE(ws.params.value(u"ctas_per_sm"_s).toInt(), 0);
        QVERIFY(!rowwise.generate(ws, *wide).contains(u"layerNormRowsPrefetch"_s));
        QVERIFY(!rowwise.generate(ws, *wide).contains(u"layerNormRowsAsync"_s));
        // A strategy written before the knobs existed is the one-row-at-a-time kernel.
        kev::Strategy legacy = rowwise.defaultStrategy(softmax, h200);
        legacy.params.remove(u"pipeline"_s);
        legacy.params.remove(u"weights"_s);
        QVERIFY(rowwise.constraints(legacy, softmax, h200).isEmpty());
    }

    // The blocks per SM follow the registers of the half-width vectors the prefetching kernel
    // uses: rows of 6144 (8 warps x 6 vectors of 4) take 3 blocks per SM, not the 2 that 3
    // vectors of 8 allowed (H200, session 13: layernorm 87.3-89.2% of the DRAM floor against
    // 81.1-83.2%, rmsnorm 92.1-93.3% against 86.8-87.5%). Where a 4-warp block with twice the
    // vectors keeps more rows in flight (at most about 44 KB), it is taken: softmax rows of 6144
    // (3 blocks of 4 warps, not 2 of 8), every op's rows of 5120 (4) and 7168 (3), and rows that
    // 8 warps cover only in a bounds-tested chunk (6656: 13 vectors at 3); rows of 8192 keep 8
    // warps (16 vectors at 3 blocks lost).
    void prefetchBlocksFollowTheRegisters() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        struct Case {
            QString task;
            qint64 n;
            int warps;
            int vectors;
            int ctas;
        };
        const Case cases[] = {
            {u"layernorm_bf16_test"_s, 6144, 8, 6, 3}, {u"rmsnorm_bf16_test"_s, 6144, 8, 6, 3},
            {u"softmax_f16_test"_s, 6144, 4, 12, 3},   {u"layernorm_bf16_test"_s, 5120, 4, 10, 4},
            {u"softmax_f16_test"_s, 5120, 4, 10, 4},   {u"rmsnorm_bf16_test"_s, 7168, 4, 14, 3},
            {u"layernorm_bf16_test"_s, 8192, 8, 8, 2}, {u"softmax_f16_test"_s, 6656, 4, 13, 3},
        };
        for (const Case& c : cases) {
            kev::Task t = memoryTask(c.task);
            t.m = 4096;
            t.n = c.n;
            const kev::Strategy s = rowwise.defaultStrategy(t, h200);
            const QByteArray where = (c.task + u' ' + QString::number(c.n)).toUtf8();
            QVERIFY2(rowwise.constraints(s, t, h200).isEmpty(), where.constData());
            QCOMPARE(s.params.value(u"pipeline"_s).toString(), u"prefetch"_s);
            QVERIFY2(s.warps == c.warps, where.constData());
            QCOMPARE(s.vectorWidth, 4);
            QVERIFY2(s.params.value(u"vectors_per_thread"_s).toInt() == c.vectors,
                     where.constData());
            QVERIFY2(s.params.value(u"ctas_per_sm"_s).toInt() == c.ctas, where.constData());
        }
    }

    // A task row that the chunk covers with less than one vector per thread past its end gets the
    // prefetching instantiation that tests only each thread's last vector (rows of 9000: 8 warps
    // x 9 vectors of 4, 8 of them inside the row for every thread), for every op; an exact cover,
    // or a row a whole vector per thread shorter, does not.
    void tailTestedRowsSkipTheInsideTests() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        const struct {
            QString task;
            QString kernel;
        } ops[] = {{u"layernorm_bf16_test"_s, u"layerNormRowsPrefetch"_s},
                   {u"rmsnorm_bf16_test"_s, u"rmsNormRowsPrefetch"_s},
                   {u"softmax_f16_test"_s, u"softmaxRowsPrefetch"_s}};
        for (const auto& op : ops) {
            kev::Task t = memoryTask(op.task);
            t.m = 4096;
            t.n = 9000;
            kev::Strategy s = rowwise.defaultStrategy(t, h200);
            const QByteArray where = op.task.toUtf8();
            QVERIFY2(rowwise.constraints(s, t, h200).isEmpty(), where.constData());
            QCOMPARE(s.params.value(u"pipeline"_s).toString(), u"prefetch"_s);
            s.warps = 8;
            s.vectorWidth = 4;
            s.params.insert(u"mapping"_s, u"block"_s);
            s.params.insert(u"vectors_per_thread"_s, 9);
            QVERIFY2(rowwise.constraints(s, t, h200).isEmpty(),
                     qPrintable(rowwise.constraints(s, t, h200).join(u"; "_s)));
            // Only rows inside the chunk: a longer validation row (N > CHUNK) streams (the
            // first form left its columns past CHUNK unwritten: NaN on the H200).
            const QString tail =
                u"else if (N < CHUNK && N > CHUNK - ROW_THREADS * VEC && N % VEC == 0) // last "
                "vector tested\n        %1<VPT - 1><<<"_s.arg(op.kernel);
            const QString code = rowwise.generate(s, t);
            QVERIFY2(code.contains(tail), where.constData());
            QVERIFY2(code.contains(u"if (j < INSIDE || col < static_cast<int>(N))"_s),
                     where.constData());
            // Exact (9216 = 8 x 32 x 9 x 4): no tested vector in the task's row.
            t.n = 9216;
            QVERIFY2(!rowwise.generate(s, t).contains(u"<VPT - 1>"_s), where.constData());
            // 8192: a whole vector per thread past the row, the general instantiation.
            t.n = 8192;
            QVERIFY2(!rowwise.generate(s, t).contains(u"<VPT - 1>"_s), where.constData());
            // A part vector (N % VEC != 0) streams.
            t.n = 9001;
            QVERIFY2(!rowwise.generate(s, t).contains(u"<VPT - 1>"_s), where.constData());
        }
    }

    // Layernorm's 16-bit rows that the chunk covers inexactly take 16-byte vectors (the same chunk,
    // half the vectors); exact covers, rmsnorm and softmax keep 8-byte ones (H200, session 22).
    // W, B and Y of one 16-bit type store through the packed affine step; f32 does not.
    void layernormInexactRowsTakeWideVectors() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        kev::Task t = memoryTask(u"layernorm_bf16_test"_s);
        t.m = 4792;
        t.n = 7000;
        kev::Strategy s = rowwise.defaultStrategy(t, h200);
        QVERIFY(rowwise.constraints(s, t, h200).isEmpty());
        QCOMPARE(s.params.value(u"pipeline"_s).toString(), u"prefetch"_s);
        QCOMPARE(s.vectorWidth, 8);
        QCOMPARE(s.warps * 32 * s.vectorWidth * s.params.value(u"vectors_per_thread"_s).toInt(),
                 7168);
        const QString code = rowwise.generate(s, t);
        QVERIFY(code.contains(u"<VPT - 1><<<"_s)); // still only the last vector tested
        QVERIFY(code.contains(u"storeAffine(y + col, d, w, b)"_s));
        QVERIFY(code.contains(u"__nv_bfloat162"_s));
        t.n = 4096; // exact
        QCOMPARE(rowwise.defaultStrategy(t, h200).vectorWidth, 4);
        kev::Task rms = memoryTask(u"rmsnorm_bf16_test"_s);
        rms.m = 4792;
        rms.n = 7000;
        const kev::Strategy r = rowwise.defaultStrategy(rms, h200);
        QCOMPARE(r.vectorWidth, 4);
        QVERIFY(rowwise.generate(r, rms).contains(u"storeScaled(y + col, v, "_s));
        kev::Task f32 = memoryTask(u"layernorm_f32_test"_s);
        f32.m = 4792;
        f32.n = 7000;
        const QString plain = rowwise.generate(rowwise.defaultStrategy(f32, h200), f32);
        QVERIFY(!plain.contains(u"storeAffine"_s));
        QVERIFY(!plain.contains(u"__hfma2"_s));
    }

    // rmsnorm is a typed mode of the shared generator: layernorm's plan without the mean, one
    // statistic (one_pass is its only value) and W alone.
    void rmsnormIsLayernormWithoutTheMean() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        const kev::Task bf16 = memoryTask(u"rmsnorm_bf16_test"_s);
        const kev::Strategy p = rowwise.defaultStrategy(bf16, h200);
        QCOMPARE(p.params.value(u"pipeline"_s).toString(), u"prefetch"_s);
        QCOMPARE(p.params.value(u"weights"_s).toString(), u"registers"_s);
        QCOMPARE(p.params.value(u"ctas_per_sm"_s).toInt(), 4);
        QCOMPARE(p.params.value(u"stats"_s).toString(), u"one_pass"_s);
        QCOMPARE(p.warps, 4);
        QCOMPARE(p.vectorWidth, 4);
        QCOMPARE(p.params.value(u"vectors_per_thread"_s).toInt(), 8);
        QVERIFY2(rowwise.constraints(p, bf16, h200).isEmpty(),
                 qPrintable(rowwise.constraints(p, bf16, h200).join(u"; "_s)));
        QVERIFY2(p.rationale.contains(u"Memory-bound rmsnorm"_s), qPrintable(p.rationale));
        QVERIFY2(p.rationale.contains(u", W kept in registers"_s), qPrintable(p.rationale));
        const QString code = rowwise.generate(p, bf16);
        QVERIFY(code.contains(u"KEVOLVE_OP_RMSNORM"_s));
        QVERIFY(code.contains(u"using ElemW = __nv_bfloat16;"_s));
        QVERIFY(code.contains(u"if (N == CHUNK)\n        rmsNormRowsPrefetch<VPT><<<"_s));
        QVERIFY(code.contains(u"loadWeights<INSIDE>(W, N, t, weights);"_s));
        QVERIFY(code.contains(u"reinterpret_cast<uintptr_t>(args->inputs[1].data) % (VEC * "
                              "sizeof(ElemW)) != 0"_s));
        QVERIFY(code.contains(u"return 6; // epsilon"_s));
        QVERIFY(!code.contains(u"ElemB"_s));
        QVERIFY(!code.contains(u"layerNorm"_s));
        QVERIFY(!code.contains(u"${"_s));
        QVERIFY(!code.contains(u"#error"_s));

        // W read per row instead of kept.
        kev::Strategy load = p;
        load.params.insert(u"weights"_s, u"load"_s);
        QVERIFY(rowwise.constraints(load, bf16, h200).isEmpty());
        const QString loadCode = rowwise.generate(load, bf16);
        QVERIFY(!loadCode.contains(u"PackedWeights"_s));
        QVERIFY(loadCode.contains(u"loadVec(W + col, w);"_s));

        // The knob values rmsnorm does not implement are refused by name.
        for (const QString& stats : {u"two_pass"_s, u"shifted_one_pass"_s}) {
            kev::Strategy s = p;
            s.params.insert(u"stats"_s, stats);
            const QString problems = rowwise.constraints(s, bf16, h200).join(u"; "_s);
            QVERIFY2(problems.contains(u"stats="_s + stats), qPrintable(problems));
        }
        kev::Strategy async = p;
        async.params.insert(u"pipeline"_s, u"async"_s);
        async.params.insert(u"depth"_s, 4);
        QVERIFY(rowwise.constraints(async, bf16, h200)
                    .join(u"; "_s)
                    .contains(u"pipeline=async: implemented for layernorm only, not rmsnorm"_s));

        // f32 rows: one row at a time, the row cached in registers.
        const kev::Task f32 = memoryTask(u"rmsnorm_f32_test"_s);
        const kev::Strategy fs = rowwise.defaultStrategy(f32, h200);
        QCOMPARE(fs.params.value(u"pipeline"_s).toString(), u"none"_s);
        QCOMPARE(fs.params.value(u"stats"_s).toString(), u"one_pass"_s);
        QVERIFY(rowwise.constraints(fs, f32, h200).isEmpty());
        const QString f32Code = rowwise.generate(fs, f32);
        QVERIFY(f32Code.contains(u"rmsNormRows<<<grid, THREADS, 0, stream>>>"_s));
        QVERIFY(!f32Code.contains(u"rmsNormRowsPrefetch"_s));

        // Rows whose prefetch does not fit the registers (f16, 32768) and rows longer than the
        // register cache (bf16, 65536) fall back to one row at a time with one-pass statistics.
        for (const auto& [dtype, n] : {std::pair{u"f16"_s, 32768}, std::pair{u"bf16"_s, 65536}}) {
            QString error;
            const auto wide =
                parse(uR"({"name": "wide", "op": "rmsnorm", "shape": {"M": 64, "N": %1},
                     "dtypes": {"X": "%2", "W": "%2", "Y": "%2"}})"_s.arg(n)
                          .arg(dtype),
                      &error);
            QVERIFY2(wide, qPrintable(error));
            const kev::Strategy ws = rowwise.defaultStrategy(*wide, h200);
            QCOMPARE(ws.params.value(u"pipeline"_s).toString(), u"none"_s);
            QCOMPARE(ws.params.value(u"stats"_s).toString(), u"one_pass"_s);
            // 64 rows are too few for 132 SMs: rmsnorm splits them over a cluster like layernorm
            // (templates/rowwise/split.cu), and what it generates launches that kernel.
            if (ws.params.value(u"split"_s).toInt(1) > 1)
                QVERIFY(rowwise.generate(ws, *wide).contains(u"RowsSplit"_s));
            // (Whether 1024 threads' registers fit is the shared default's matter, as for
            // layernorm; the statistics are rmsnorm's.)
            QVERIFY(!rowwise.constraints(ws, *wide, h200).join(u"; "_s).contains(u"stats="_s));
        }
    }

    void memoryConstraintsRejectImpossiblePoints() { rejectKnob({}); }

    // The same checks from the f16 softmax default switched to prefetching at 2 blocks per SM.
    void prefetchSoftmaxConstraintsRejectImpossiblePoints_data() {
        QTest::addColumn<QString>("taskName");
        QTest::addColumn<QString>("familyId");
        QTest::addColumn<QString>("knob");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("prefetch softmax, shifted one-pass")
            << u"softmax_f16_test"_s << u"rowwise"_s << u"stats"_s
            << QJsonValue(u"shifted_one_pass"_s)
            << u"pipeline=prefetch on softmax computes two-pass or one-pass (per-thread maximum "
               "and sum, one reduction) statistics; use stats=two_pass or one_pass"_s;
        QTest::newRow("prefetch softmax, weights in registers")
            << u"softmax_f16_test"_s << u"rowwise"_s << u"weights"_s << QJsonValue(u"registers"_s)
            << u"weights=registers: softmax has no W and B to keep; use weights=load"_s;
        QTest::newRow("prefetch softmax, too many registers")
            << u"softmax_f16_test"_s << u"rowwise"_s << u"vectors_per_thread"_s << QJsonValue(16)
            << u"ctas_per_sm=2 x 256 threads x about 168 registers exceeds the 65536 registers"_s;
        QTest::newRow("prefetch softmax, registers not resident")
            << u"softmax_f16_test"_s << u"rowwise"_s << u"ctas_per_sm"_s << QJsonValue(3)
            << u"ctas_per_sm=3 x 256 threads x about 104 registers exceeds the 65536 registers"_s;
        QTest::newRow("prefetch softmax, no persistent grid")
            << u"softmax_f16_test"_s << u"rowwise"_s << u"ctas_per_sm"_s << QJsonValue(0)
            << u"pipeline=prefetch needs a persistent grid"_s;
        QTest::newRow("prefetch softmax, row too long")
            << u"softmax_f16_test"_s << u"rowwise"_s << u"vectors_per_thread"_s << QJsonValue(2)
            << u"pipeline=prefetch keeps the row in registers, but rows of 8192 exceed the 2048 "
               "elements"_s;
        QTest::newRow("async softmax from prefetch")
            << u"softmax_f16_test"_s << u"rowwise"_s << u"pipeline"_s << QJsonValue(u"async"_s)
            << u"pipeline=async: implemented for layernorm only, not softmax"_s;
    }

    void prefetchSoftmaxConstraintsRejectImpossiblePoints() {
        rejectKnob({{u"pipeline"_s, u"prefetch"_s}, {u"ctas_per_sm"_s, 2}});
    }

    // 16-bit softmax rows that fit take the prefetching kernel by default (f32 rows when asked):
    // two reductions with two_pass, one of (maximum, sum) pairs with one_pass, the exponentials
    // kept for the output in both; rows of exactly CHUNK elements without bounds tests.
    void softmaxPrefetchGeneratesTheChosenStatistics() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        const kev::Task softmax = memoryTask(u"softmax_f16_test"_s);
        QCOMPARE(rowwise.defaultStrategy(memoryTask(u"softmax_f32_test"_s), h200)
                     .params.value(u"pipeline"_s)
                     .toString(),
                 u"none"_s);
        kev::Strategy s = rowwise.defaultStrategy(softmax, h200);
        QCOMPARE(s.params.value(u"pipeline"_s).toString(), u"prefetch"_s);
        QCOMPARE(s.params.value(u"ctas_per_sm"_s).toInt(), 2);
        QCOMPARE(s.params.value(u"stats"_s).toString(), u"two_pass"_s);
        QCOMPARE(s.vectorWidth, 4);
        QCOMPARE(s.params.value(u"vectors_per_thread"_s).toInt(), 8);
        // Named by its own knobs, not a GEMM tile (the session's plan column).
        QCOMPARE(s.summary(), u"rowwise w8 8x4 2/SM block prefetch two_pass"_s);
        QCOMPARE(family(u"rowwise"_s)
                     .defaultStrategy(memoryTask(u"layernorm_bf16_test"_s), h200)
                     .summary(),
                 u"rowwise w4 8x4 4/SM block prefetch shifted_one_pass W/B-in-registers"_s);
        QVERIFY(family(u"wgmma_tma"_s)
                    .defaultStrategy(task(u"gemm_fp16_fp32_4096"_s), h200)
                    .summary()
                    .startsWith(u"wgmma_tma 128x256x64 w"_s));
        {
            // 16 vectors of 8 keep 128 exponentials per thread: refused by name.
            kev::Strategy wide = s;
            wide.vectorWidth = 8;
            wide.params.insert(u"vectors_per_thread"_s, 16);
            const QString problems = rowwise.constraints(wide, softmax, h200).join(u"; "_s);
            QVERIFY2(
                problems.contains(
                    u"pipeline=prefetch on softmax keeps 128 floats of exp(x - m) per thread"_s),
                qPrintable(problems));
        }
        QVERIFY2(rowwise.constraints(s, softmax, h200).isEmpty(),
                 qPrintable(rowwise.constraints(s, softmax, h200).join(u"; "_s)));
        const QString twoPass = rowwise.generate(s, softmax);
        QVERIFY(twoPass.contains(u"constexpr int CTAS_PER_SM = 2;"_s));
        QVERIFY(twoPass.contains(u"if (N == CHUNK)\n        softmaxRowsPrefetch<VPT><<<"_s));
        QVERIFY(twoPass.contains(
            u"else if (N <= CHUNK && N % VEC == 0)\n        softmaxRowsPrefetch<0><<<"_s));
        QVERIFY(twoPass.contains(
            u"v[j] = *reinterpret_cast<const R*>(x + (j < INSIDE || col < left ? t * VEC + col : 0));"_s));
        QVERIFY(twoPass.contains(u"fillPastRow<INSIDE>(current.v, N, t, ElemX(-INFINITY));"_s));
        QVERIFY(twoPass.contains(u"ex2.approx.ftz.f32"_s));
        QVERIFY(twoPass.contains(u"else\n        softmaxRows<<<"_s));
        QVERIFY(twoPass.contains(u"__launch_bounds__(THREADS, CTAS_PER_SM)"_s));
        QVERIFY(twoPass.contains(u"the next row prefetched (packed)"_s));
        QCOMPARE(twoPass.count(u"keepPacked(current);"_s), 1);
        QVERIFY(!twoPass.contains(u"combineMaxSum"_s));
        QVERIFY(!twoPass.contains(u"RawW"_s));
        QVERIFY(!twoPass.contains(u"${"_s));

        s.params.insert(u"stats"_s, u"one_pass"_s);
        QVERIFY2(rowwise.constraints(s, softmax, h200).isEmpty(),
                 qPrintable(rowwise.constraints(s, softmax, h200).join(u"; "_s)));
        const QString onePass = rowwise.generate(s, softmax);
        QCOMPARE(onePass.count(u"const float scale = rescale(part.m, total.m) / total.s;"_s), 1);
        QCOMPARE(onePass.count(u"keepPacked(current);"_s), 0);
        // The prefetching kernel exponentiates each element once: no exp in its output loop.
        const QString prefetchKernel = onePass.mid(onePass.indexOf(u"softmaxRowsPrefetch(const"_s));
        QCOMPARE(prefetchKernel.count(u"expShifted("_s), 1);
        QVERIFY(!onePass.contains(u"${"_s));

        // The layernorm kernels still declare their packed W and B types.
        const kev::Task bf16 = memoryTask(u"layernorm_bf16_test"_s);
        QVERIFY(rowwise.generate(rowwise.defaultStrategy(bf16, h200), bf16)
                    .contains(u"using RawW = Raw<VEC * sizeof(ElemW)>::type;"_s));
    }

    // The same checks from the bf16 layernorm default switched to the cp.async ring.
    void asyncLayernormConstraintsRejectImpossiblePoints_data() {
        QTest::addColumn<QString>("taskName");
        QTest::addColumn<QString>("familyId");
        QTest::addColumn<QString>("knob");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("async, no persistent grid")
            << u"layernorm_bf16_test"_s << u"rowwise"_s << u"ctas_per_sm"_s << QJsonValue(0)
            << u"pipeline=async needs a persistent grid"_s;
        QTest::newRow("async, depth too small")
            << u"layernorm_bf16_test"_s << u"rowwise"_s << u"depth"_s << QJsonValue(1)
            << u"params.depth=1: rows in flight per block with pipeline=async must be 2 to 6"_s;
        QTest::newRow("async, depth too large")
            << u"layernorm_bf16_test"_s << u"rowwise"_s << u"depth"_s << QJsonValue(8)
            << u"params.depth=8"_s;
        QTest::newRow("async, 2-byte vectors")
            << u"layernorm_bf16_test"_s << u"rowwise"_s << u"vectorWidth"_s << QJsonValue(1)
            << u"cp.async (4, 8 or 16 bytes), but vectorWidth=1 of bf16 is 2 bytes"_s;
        QTest::newRow("async, ring over the SM")
            << u"layernorm_bf16_test"_s << u"rowwise"_s << u"ctas_per_sm"_s << QJsonValue(8)
            << u"ctas_per_sm=8 x (32864 bytes of ring and partials + 1024 reserved) exceeds the "
               "233472 bytes of shared memory of an SM"_s;
        QTest::newRow("async, ring over a block")
            << u"layernorm_bf16_test"_s << u"rowwise"_s << u"warps"_s << QJsonValue(32)
            << u"ring of 262912 bytes"_s;
        QTest::newRow("async, registers not resident")
            << u"layernorm_bf16_test"_s << u"rowwise"_s << u"ctas_per_sm"_s << QJsonValue(6)
            << u"ctas_per_sm=6 x 128 threads x about 112 registers exceeds the 65536 registers"_s;
        QTest::newRow("async, one-pass")
            << u"layernorm_bf16_test"_s << u"rowwise"_s << u"stats"_s << QJsonValue(u"one_pass"_s)
            << u"pipeline=async computes two-pass statistics; use stats=two_pass"_s;
        QTest::newRow("async, shifted one-pass")
            << u"layernorm_bf16_test"_s << u"rowwise"_s << u"stats"_s
            << QJsonValue(u"shifted_one_pass"_s)
            << u"pipeline=async computes two-pass statistics; use stats=two_pass"_s;
        QTest::newRow("async, row too long")
            << u"layernorm_bf16_test"_s << u"rowwise"_s << u"vectors_per_thread"_s << QJsonValue(2)
            << u"pipeline=async keeps the row in its shared-memory ring, but rows of 4096 exceed "
               "the 1024 elements"_s;
    }

    void asyncLayernormConstraintsRejectImpossiblePoints() {
        rejectKnob({{u"pipeline"_s, u"async"_s}, {u"depth"_s, 4}, {u"stats"_s, u"two_pass"_s}});
    }

    void memoryCodeHasOnlyTheChosenConfiguration() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        const kev::Task softmax = memoryTask(u"softmax_f16_test"_s);
        kev::Strategy s = rowwise.defaultStrategy(softmax, h200);
        s.params.insert(u"stats"_s, u"two_pass"_s);
        const QString twoPass = rowwise.generate(s, softmax);
        s.params.insert(u"stats"_s, u"one_pass"_s);
        const QString online = rowwise.generate(s, softmax);
        QVERIFY(!twoPass.contains(u"combineMaxSum"_s));
        QVERIFY(online.contains(u"combineMaxSum"_s));
        QVERIFY(online.contains(u"constexpr int VEC = 4;"_s));
        QVERIFY(online.contains(u"KEVOLVE_OP_SOFTMAX"_s));
        QVERIFY(!online.contains(u"${"_s));

        const kev::Task max = memoryTask(u"reduce_max_f32_test"_s);
        const QString maxCode = rowwise.generate(rowwise.defaultStrategy(max, h200), max);
        QVERIFY(maxCode.contains(u"maxPropagatingNaN"_s));
        QVERIFY(maxCode.contains(u"args->scalars[0] != 1"_s));
        const kev::Task sum = memoryTask(u"reduce_sum_f16_test"_s);
        const QString sumCode = rowwise.generate(rowwise.defaultStrategy(sum, h200), sum);
        QVERIFY(!sumCode.contains(u"maxPropagatingNaN"_s));
        QVERIFY(sumCode.contains(u"using ElemY = float;"_s));

        const kev::KernelFamily& gemv = family(u"gemv"_s);
        const kev::Task gemvT = memoryTask(u"gemv_t_f16_test"_s);
        kev::Strategy g = gemv.defaultStrategy(gemvT, h200);
        QVERIFY(g.params.value(u"split_m"_s).toInt() > 1);
        QVERIFY(gemv.generate(g, gemvT).contains(u"gemvFinish"_s));
        QVERIFY(gemv.generate(g, gemvT).contains(u"kevolve_workspace_bytes"_s));
        g.params.insert(u"split_m"_s, 1);
        QVERIFY(!gemv.generate(g, gemvT).contains(u"gemvFinish"_s));
        const kev::Task gemvN = memoryTask(u"gemv_f16_test"_s);
        const QString rows = gemv.generate(gemv.defaultStrategy(gemvN, h200), gemvN);
        QVERIFY(rows.contains(u"gemvRows"_s));
        QVERIFY(!rows.contains(u"gemvColumns"_s));

        const kev::KernelFamily& ew = family(u"elementwise"_s);
        const kev::Task gelu = memoryTask(u"elementwise_gelu_f16_test"_s);
        const QString geluCode = ew.generate(ew.defaultStrategy(gelu, h200), gelu);
        QVERIFY(geluCode.contains(u"erff("_s));
        QVERIFY(!geluCode.contains(u"expf("_s));
        const kev::Task silu = memoryTask(u"elementwise_silu_f32_test"_s);
        QVERIFY(ew.generate(ew.defaultStrategy(silu, h200), silu).contains(u"expf(-x)"_s));
    }
};

QTEST_GUILESS_MAIN(TestMemoryFamilies)
#include "tst_memoryfamilies.moc"
