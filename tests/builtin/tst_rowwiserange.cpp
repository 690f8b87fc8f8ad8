// Every task of a row-wise op gets a kernel (issue 18): tasks generated across the ops' whole
// shape range (1 to 1048576 rows, rows of 1 to 1048576 elements, odd lengths, unaligned rows, f32,
// f16 and bf16) each get a feasible first plan from the planner, and its code generates. The
// compile of a sample of them with nvcc is tests/builtin/long_rows_compile.cmake.
#include "builtin/counterjumps.h"
#include "builtintest.h"

#include <QJsonDocument>

using namespace Qt::StringLiterals;
using namespace kevtest;

namespace {

// A task file's JSON for op (softmax, layernorm, rmsnorm, reduce_sum, reduce_max) of dtype over M x
// N rows aligned to `align` elements.
kev::Task rowTask(const QString& op, const QString& dtype, qint64 m, qint64 n, int align) {
    const bool layerNorm = op == u"layernorm";
    const bool rmsNorm = op == u"rmsnorm";
    const bool reduce = op.startsWith(u"reduce"_s);
    // Reductions write f32 whatever they read.
    QJsonObject dtypes{
        {u"X"_s, dtype}, {u"Y"_s, reduce ? u"f32"_s : dtype}, {u"accumulate"_s, u"f32"_s}};
    if (layerNorm || rmsNorm)
        dtypes.insert(u"W"_s, dtype);
    if (layerNorm)
        dtypes.insert(u"B"_s, dtype);
    QJsonObject params;
    if (layerNorm || rmsNorm)
        params.insert(u"epsilon"_s, 1e-5);
    if (reduce)
        params.insert(u"reduction"_s, op.mid(7));
    const QJsonObject json{
        {u"schema_version"_s, 1},
        {u"name"_s, u"%1_%2_%3x%4_a%5"_s.arg(op, dtype).arg(m).arg(n).arg(align)},
        {u"op"_s, reduce ? u"reduce"_s : op},
        {u"dtypes"_s, dtypes},
        {u"shape"_s, QJsonObject{{u"M"_s, m}, {u"N"_s, n}}},
        {u"validation_shapes"_s, QJsonArray{QJsonObject{{u"M"_s, 3}, {u"N"_s, 1}}}},
        {u"params"_s, params},
        {u"alignment"_s, QJsonObject{{u"leading_dim_multiple"_s, align}}},
    };
    QString error;
    const auto task = kev::Task::fromJson(json, &error);
    if (!task)
        qFatal("generated task %s: %s", qPrintable(json.value(u"name"_s).toString()),
               qPrintable(error));
    return *task;
}

const QStringList kOps{u"softmax"_s, u"layernorm"_s, u"rmsnorm"_s, u"reduce_sum"_s,
                       u"reduce_max"_s};
const QStringList kDtypes{u"f32"_s, u"f16"_s, u"bf16"_s};
const QList<qint64> kRows{1, 3, 64, 256, 4096, 65536, 1048576};
// 2600, 6000, 7000 and 12000: the inexact 2-, 4- and 6-warp covers of session 19; 40000 to
// 256000: vocabulary rows whose bulk split is any count from 1 to 8 (session 25).
const QList<qint64> kCols{1,      2,      7,      31,     32,     100,    1000,   1536,
                          2600,   3080,   4097,   6000,   7000,   8192,   12000,  16384,
                          32000,  32001,  40000,  50257,  65536,  100277, 128256, 151936,
                          152064, 200000, 256000, 262144, 1048576};

// An sm_80 part: no thread block clusters.
kev::DeviceInfo a100() {
    kev::DeviceInfo d = kev::DeviceInfo::h200();
    d.name = u"NVIDIA A100-SXM4-80GB"_s;
    d.ccMajor = 8;
    d.ccMinor = 0;
    d.smCount = 108;
    d.smemPerBlockOptin = 166912;
    d.smemPerSm = 167936;
    return d;
}

kev::Strategy withParam(kev::Strategy s, const QString& name, const QJsonValue& value) {
    s.params.insert(name, value);
    return s;
}

} // namespace

class TstRowwiseRange : public QObject {
    Q_OBJECT

private slots:
    // The planner's first plan of every generated task is the rowwise family, feasible on the
    // H200, and generates a kernel for the task's op.
    void everyTaskHasAFeasibleFirstPlan_data() {
        QTest::addColumn<kev::DeviceInfo>("device");
        QTest::newRow("H200 (clusters)") << kev::DeviceInfo::h200();
        QTest::newRow("A100 (no clusters)") << a100();
    }

    void everyTaskHasAFeasibleFirstPlan() {
        QFETCH(kev::DeviceInfo, device);
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        int tasks = 0;
        QStringList failures;
        for (const QString& op : kOps) {
            for (const QString& dtype : kDtypes) {
                for (const qint64 m : kRows) {
                    for (const qint64 n : kCols) {
                        // Task files cap their tensors at 1 TiB.
                        if (m * n > (qint64(1) << 36))
                            continue;
                        for (const int align : {1, 8}) {
                            kev::AgentContext ctx;
                            ctx.device = device;
                            ctx.task = rowTask(op, dtype, m, n, align);
                            ++tasks;
                            QString error;
                            kev::PlannerSearch planner;
                            const auto first = planner.next(ctx, &error);
                            if (!first) {
                                failures << ctx.task.name + u": "_s + error;
                                continue;
                            }
                            if (first->family != u"rowwise") {
                                failures << ctx.task.name + u": family "_s + first->family;
                                continue;
                            }
                            const QStringList problems =
                                rowwise.constraints(*first, ctx.task, device);
                            if (!problems.isEmpty()) {
                                failures << ctx.task.name + u": "_s + problems.join(u"; "_s);
                                continue;
                            }
                            const QString code = rowwise.generate(*first, ctx.task);
                            if (!code.contains(u"kevolve_launch"_s) || code.contains(u"${"_s))
                                failures << ctx.task.name + u": generated code incomplete"_s;
                            // A mode without a kernel for the op renders a launch of nothing.
                            else if (!code.contains(u"<<<"_s))
                                failures << ctx.task.name + u": no kernel launched"_s;
                        }
                    }
                }
            }
        }
        QVERIFY2(failures.isEmpty(),
                 qPrintable(u"%1 of %2 tasks:\n"_s.arg(failures.size()).arg(tasks) +
                            failures.mid(0, 20).join(u"\n"_s)));
        QVERIFY(tasks > kOps.size() * kDtypes.size() * (kRows.size() - 1) * kCols.size() * 2);
    }

    // A row longer than the registers cache streams with statistics that read it once: online
    // softmax and Welford layernorm (the two-pass kernels would read it twice before the output).
    void longRowsStreamWithOnePassStatistics() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        for (const QString& op : {u"softmax"_s, u"layernorm"_s, u"rmsnorm"_s}) {
            for (const QString& dtype : kDtypes) {
                const kev::Task t = rowTask(op, dtype, 4096, 128256, 8);
                const kev::Strategy s = rowwise.defaultStrategy(t, h200);
                QCOMPARE(s.params.value(u"stats"_s).toString(), u"one_pass"_s);
                QCOMPARE(s.params.value(u"mapping"_s).toString(), u"block"_s);
                QVERIFY2(s.rationale.contains(u"stream"_s), qPrintable(s.rationale));
            }
        }
    }

    // A prefetching grid keeps about kPrefetchBytesPerSm of next rows in flight per SM: the
    // measured defaults (layernorm rows of 8 KB at 4 blocks, softmax rows of 16 KB at 2) keep
    // theirs, shorter rows take more blocks (layernorm f16 rows of 1536: 8, issue 18).
    void prefetchKeepsBytesInFlight() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        const auto ctasOf = [&](const kev::Task& t) {
            const kev::Strategy s = rowwise.defaultStrategy(t, h200);
            return s.params.value(u"pipeline"_s).toString() == u"prefetch"
                       ? s.params.value(u"ctas_per_sm"_s).toInt()
                       : -1;
        };
        QCOMPARE(ctasOf(rowTask(u"layernorm"_s, u"bf16"_s, 16384, 4096, 8)), 4);
        QCOMPARE(ctasOf(rowTask(u"softmax"_s, u"f16"_s, 8192, 8192, 8)), 2);
        QCOMPARE(ctasOf(rowTask(u"layernorm"_s, u"f16"_s, 32768, 1536, 8)), 8);
        QCOMPARE(ctasOf(rowTask(u"rmsnorm"_s, u"bf16"_s, 16384, 4096, 8)), 4);
        QCOMPARE(ctasOf(rowTask(u"rmsnorm"_s, u"f16"_s, 32768, 1536, 8)), 8);
        const kev::Task shortRows = rowTask(u"layernorm"_s, u"f16"_s, 32768, 1536, 8);
        QVERIFY(rowwise.constraints(rowwise.defaultStrategy(shortRows, h200), shortRows, h200)
                    .isEmpty());
    }

    // 16-bit rows that no block covers exactly take the block with the fewest elements past the
    // row (rows of 3000: 4 warps x 6 vectors of 4, a chunk of 3072, not 4096), also past 5% when
    // it passes the row by less than the power-of-two block would; 32-bit rows keep theirs
    // (measured 95.6% of the floor). Long rows in 16 warps at one block per SM take 8 warps with
    // twice the vectors at two (rows of 10240 and 12288).
    void inexactAndLongRowsKeepTheirBytesInFlight() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        const auto shape = [&](const kev::Task& t) {
            const kev::Strategy s = rowwise.defaultStrategy(t, h200);
            [&] { QVERIFY(rowwise.constraints(s, t, h200).isEmpty()); }();
            return u"%1x%2x%3 c%4"_s.arg(s.warps)
                .arg(s.vectorWidth)
                .arg(s.params.value(u"vectors_per_thread"_s).toInt())
                .arg(s.params.value(u"ctas_per_sm"_s).toInt());
        };
        QCOMPARE(shape(rowTask(u"softmax"_s, u"f16"_s, 11184, 3000, 8)), u"4x4x6 c5"_s);
        QCOMPARE(shape(rowTask(u"rmsnorm"_s, u"f16"_s, 11184, 3000, 8)), u"4x4x6 c6"_s);
        QCOMPARE(shape(rowTask(u"softmax"_s, u"f32"_s, 11184, 3000, 4)), u"8x4x4 c0"_s);
        QCOMPARE(shape(rowTask(u"layernorm"_s, u"f16"_s, 2728, 12288, 8)), u"8x4x12 c2"_s);
        QCOMPARE(shape(rowTask(u"rmsnorm"_s, u"f16"_s, 3272, 10240, 8)), u"8x4x10 c2"_s);
        // No cover within 5% (rows of 9000, 20000): the fewest elements past the row still beat
        // the power-of-two block (16384 at one block per SM for 9000; a chunk of 10240, streamed,
        // for 20000). Rows of 1200, a quarter past a warp's target: a warp per row (10 vectors of
        // 4 a lane), not 2 warps x 8 (a chunk of 2048) nor a block's inexact cover.
        QCOMPARE(shape(rowTask(u"softmax"_s, u"f16"_s, 27960, 1200, 8)), u"4x4x10 c4"_s);
        QCOMPARE(rowwise.defaultStrategy(rowTask(u"rmsnorm"_s, u"bf16"_s, 27960, 1200, 8), h200)
                     .params.value(u"mapping"_s)
                     .toString(),
                 u"warp"_s);
        QCOMPARE(shape(rowTask(u"rmsnorm"_s, u"bf16"_s, 3728, 9000, 8)), u"8x4x9 c2"_s);
        // Layernorm's inexact covers then take 16-byte vectors, the same chunk (session 22).
        QCOMPARE(shape(rowTask(u"layernorm"_s, u"f16"_s, 1672, 20000, 8)), u"16x8x5 c1"_s);
        // Session 19 (H200, docs/benchmarks.md): rows of 6000 and 7000 in a 4-warp block's
        // inexact cover at 3 blocks per SM, not 8 warps x 6 or 7 at 2-3; rows of 2600 in 2 warps
        // x 11 at 8 blocks, not 4 warps x 6 (a chunk of 3072); softmax rows of 12000 and 12288,
        // whose 8-warp half does not fit two blocks, in 6 warps x 16 at two, not 16 x 6 at one
        // (layernorm's half fits and stays).
        // Layernorm's then in 16-byte vectors, half as many (session 22; 11 is odd and stays).
        for (const QString& op : {u"layernorm"_s, u"softmax"_s, u"rmsnorm"_s}) {
            const QString dtype = op == u"rmsnorm" ? u"bf16"_s : u"f16"_s;
            const bool wide = op == u"layernorm";
            QCOMPARE(shape(rowTask(op, dtype, 5592, 6000, 8)),
                     wide ? u"4x8x6 c3"_s : u"4x4x12 c3"_s);
            QCOMPARE(shape(rowTask(op, dtype, 4792, 7000, 8)),
                     wide ? u"4x8x7 c3"_s : u"4x4x14 c3"_s);
            QCOMPARE(shape(rowTask(op, dtype, 12904, 2600, 8)), u"2x4x11 c8"_s);
        }
        QCOMPARE(shape(rowTask(u"softmax"_s, u"f16"_s, 2792, 12000, 8)), u"6x4x16 c2"_s);
        QCOMPARE(shape(rowTask(u"softmax"_s, u"bf16"_s, 2728, 12288, 8)), u"6x4x16 c2"_s);
        QCOMPARE(shape(rowTask(u"layernorm"_s, u"f16"_s, 2792, 12000, 8)), u"8x8x6 c2"_s);
        // The same rows of 32-bit elements keep the power-of-two block (no 16-bit rule applies).
        QCOMPARE(shape(rowTask(u"softmax"_s, u"f32"_s, 5592, 6000, 4)), u"16x4x4 c0"_s);
        // The same rows of 32-bit elements keep the power-of-two block.
        QCOMPARE(shape(rowTask(u"softmax"_s, u"f32"_s, 3728, 9000, 4)), u"32x4x4 c0"_s);
        // A warp per row says so in its rationale, also after the switches of vector width
        // (layernorm f16 rows of 1000: 4 vectors of 8 a lane, the inexact cover's wide vectors).
        const kev::Strategy warpRows =
            rowwise.defaultStrategy(rowTask(u"layernorm"_s, u"f16"_s, 33552, 1000, 8), h200);
        QCOMPARE(warpRows.params.value(u"mapping"_s).toString(), u"warp"_s);
        QVERIFY2(warpRows.rationale.contains(u"rows of 1000 fit in one warp's registers (4 "
                                             "vectors of 8 per lane)"_s),
                 qPrintable(warpRows.rationale));
        QVERIFY(!warpRows.rationale.contains(u"need a block"_s));
    }

    // A vector-width step keeps the chunk where the count of vectors divides: from 4 warps x 14
    // vectors of 4 (rows of 7000), 7 of 8 and 28 of 2 are out of range (28 > 16), so the step
    // down stays plain; from 8 of 4, 4 of 8 and 16 of 2. An odd count steps up plainly.
    void vectorWidthStepsKeepTheChunk() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        const kev::Task t = rowTask(u"rmsnorm"_s, u"bf16"_s, 4792, 7000, 8);
        kev::Strategy s = rowwise.defaultStrategy(t, h200);
        const auto vectors = [](const kev::Strategy& x) {
            return x.params.value(u"vectors_per_thread"_s).toInt();
        };
        const auto widthSteps = [&](const kev::Strategy& from) {
            QStringList out;
            for (const kev::Strategy& m : rowwise.neighbours(from)) {
                if (m.vectorWidth != from.vectorWidth)
                    out << u"%1x%2"_s.arg(m.vectorWidth).arg(vectors(m));
            }
            out.sort();
            return out.join(u' ');
        };
        QCOMPARE(u"%1x%2"_s.arg(s.vectorWidth).arg(vectors(s)), u"4x14"_s);
        QCOMPARE(widthSteps(s), u"2x14 8x7"_s);
        bool found = false;
        for (const kev::Strategy& m : rowwise.neighbours(s)) {
            if (m.vectorWidth == 8) {
                found = true;
                QVERIFY(rowwise.constraints(m, t, h200).isEmpty());
                QVERIFY2(m.rationale.contains(u"(the same chunk)"_s), qPrintable(m.rationale));
            }
        }
        QVERIFY(found);
        s.params.insert(u"vectors_per_thread"_s, 8);
        QCOMPARE(widthSteps(s), u"2x16 8x4"_s);
        s.params.insert(u"vectors_per_thread"_s, 9);
        QCOMPARE(widthSteps(s), u"2x9 8x9"_s);
    }

    // A block that shares one row reduces over any number of warps (6 warps for softmax rows of
    // 12000); a warp per row, a row split over a cluster and the bulk copies keep powers of two,
    // and the problem names the knob and where other counts are allowed. Local steps and counter
    // jumps start from such unlisted values (6 warps, 11 or 5 vectors per thread) too.
    void warpCountsOtherThanPowersOfTwoAndUnlistedSteps() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        const kev::Task t = rowTask(u"softmax"_s, u"f16"_s, 2792, 12000, 8);
        kev::Strategy s = rowwise.defaultStrategy(t, h200);
        QCOMPARE(s.warps, 6);
        QVERIFY(rowwise.constraints(s, t, h200).isEmpty());
        QVERIFY(!rowwise.generate(s, t).isEmpty());
        s.params.insert(u"pipeline"_s, u"none"_s);
        s.params.insert(u"ctas_per_sm"_s, 0);
        QVERIFY2(rowwise.constraints(s, t, h200).isEmpty(),
                 qPrintable(rowwise.constraints(s, t, h200).join(u"; "_s)));
        const kev::Strategy warpRows = withParam(s, u"mapping"_s, u"warp"_s);
        const QStringList warpProblems = rowwise.constraints(warpRows, t, h200);
        QVERIFY2(warpProblems.join(u' ').contains(u"warps=6: must be a power of two in 1..32 (any "
                                                  "count 2..32 only for mapping=block"_s),
                 qPrintable(warpProblems.join(u"; "_s)));
        const kev::Strategy split = withParam(s, u"split"_s, 2);
        QVERIFY(rowwise.constraints(split, t, h200).join(u' ').contains(u"warps=6"_s));
        // The search steps from a value between the knob's listed ones to its listed neighbours:
        // 6 warps to 4 and 8, 11 vectors per thread (rows of 2600) to 8 and 12.
        QList<int> warpSteps;
        for (const kev::Strategy& m : rowwise.neighbours(rowwise.defaultStrategy(t, h200)))
            if (m.warps != 6)
                warpSteps << m.warps;
        std::sort(warpSteps.begin(), warpSteps.end());
        QCOMPARE(warpSteps, (QList<int>{4, 8}));
        const kev::Task rows2600 = rowTask(u"layernorm"_s, u"f16"_s, 12904, 2600, 8);
        QList<int> vectorSteps;
        for (const kev::Strategy& m : rowwise.neighbours(rowwise.defaultStrategy(rows2600, h200))) {
            const int v = m.params.value(u"vectors_per_thread"_s).toInt();
            if (v != 11)
                vectorSteps << v;
        }
        std::sort(vectorSteps.begin(), vectorSteps.end());
        QCOMPARE(vectorSteps, (QList<int>{8, 12}));
        // A counter jump starts from an unlisted value too: rows of 20000 read twice by 16 warps
        // x 5 vectors of 4 (a chunk of 10240) jump to 12 vectors, the smallest listed value that
        // caches the row, 3 steps from 5 (between the listed 4 and 6).
        const kev::Task longRows = rowTask(u"softmax"_s, u"f16"_s, 1672, 20000, 8);
        kev::Strategy streamed = rowwise.defaultStrategy(longRows, h200);
        streamed.warps = 16;
        streamed.vectorWidth = 4;
        streamed.params.insert(u"vectors_per_thread"_s, 5);
        streamed.params.insert(u"pipeline"_s, u"none"_s);
        streamed.params.insert(u"ctas_per_sm"_s, 0);
        streamed.params.insert(u"stats"_s, u"one_pass"_s);
        QVERIFY2(rowwise.constraints(streamed, longRows, h200).isEmpty(),
                 qPrintable(rowwise.constraints(streamed, longRows, h200).join(u"; "_s)));
        const auto cache = kev::cacheRowJump(rowwise, streamed, longRows, h200, 2.0);
        QVERIFY(cache);
        QCOMPARE(cache->step, 3);
        const auto cached = kev::stepParameter(
            [&] {
                for (const kev::ParameterSpec& spec : rowwise.parameters())
                    if (spec.name == u"vectors_per_thread")
                        return spec;
                return kev::ParameterSpec{};
            }(),
            streamed, cache->step);
        QVERIFY(cached);
        QCOMPARE(cached->params.value(u"vectors_per_thread"_s).toInt(), 12);
        kev::Strategy tooMany = s;
        tooMany.warps = 33;
        QVERIFY(rowwise.constraints(tooMany, t, h200)
                    .join(u' ')
                    .contains(u"warps=33: must be a power of two in 1..32"_s));
    }

    // Rows too few to give every SM a block share a row between the blocks of a cluster on
    // sm_90, as many blocks as stay resident at once; many rows, or no clusters, keep a block
    // per row.
    void fewLongRowsSplitOverACluster() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        const auto splitOf = [&](const kev::Task& t, const kev::DeviceInfo& d) {
            const kev::Strategy s = rowwise.defaultStrategy(t, d);
            return s.params.value(u"split"_s).toInt(1);
        };
        // One row of 128256: 8 slices of 16032 elements, each in the registers of its block.
        const kev::Task one = rowTask(u"softmax"_s, u"f16"_s, 1, 128256, 8);
        QCOMPARE(splitOf(one, h200), 8);
        const kev::Strategy s = rowwise.defaultStrategy(one, h200);
        QVERIFY2(s.rationale.contains(u"read once"_s), qPrintable(s.rationale));
        QVERIFY(rowwise.generate(s, one).contains(u"__cluster_dims__(SPLIT, 1, 1)"_s));
        // 32 rows: 8 blocks per row (bulk copies of 32 KB slices), so that every SM has one.
        const kev::Task rows32 = rowTask(u"softmax"_s, u"bf16"_s, 32, 128256, 8);
        QCOMPARE(splitOf(rows32, h200), 8);
        QCOMPARE(rowwise.defaultStrategy(rows32, h200).warps, 8);
        QCOMPARE(splitOf(rowTask(u"softmax"_s, u"bf16"_s, 64, 151936, 8), h200), 4);
        // The streamed rows (unaligned: no bulk copies) split the same way: 16 warps of 1-element
        // vectors.
        QCOMPARE(splitOf(rowTask(u"softmax"_s, u"bf16"_s, 32, 128256, 1), h200), 8);
        QCOMPARE(rowwise.defaultStrategy(rowTask(u"softmax"_s, u"bf16"_s, 32, 128256, 1), h200)
                     .params.value(u"pipeline"_s)
                     .toString(),
                 u"none"_s);
        QCOMPARE(splitOf(rowTask(u"layernorm"_s, u"bf16"_s, 4, 65536, 8), h200), 8);
        QCOMPARE(splitOf(rowTask(u"reduce_sum"_s, u"f32"_s, 1, 262144, 8), h200), 8);
        QCOMPARE(splitOf(rowTask(u"rmsnorm"_s, u"bf16"_s, 2, 131072, 8), h200), 8);
        // Enough rows, short rows, or no clusters: no split.
        QCOMPARE(splitOf(rowTask(u"layernorm"_s, u"f16"_s, 4096, 128256, 8), h200), 1);
        QCOMPARE(splitOf(rowTask(u"softmax"_s, u"f16"_s, 1, 1000, 8), h200), 1);
        QCOMPARE(splitOf(one, a100()), 1);
        QVERIFY(!rowwise.defaultStrategy(one, a100()).params.contains(u"split"_s));
    }

    // A split kernel far below the floor jumps to more blocks per row (Little's law over the
    // SMs reading the rows): the persistent grid's knob cannot move with a split, so the split
    // does.
    void splitKernelsJumpToMoreBlocksPerRow() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        // 128 rows: 2 blocks per row give every SM a block. At 20% of the floor, 4.5x the bytes
        // in flight: split 2 -> 8 (a jump moves two steps or more; one step is an ordinary move).
        const kev::Task t = rowTask(u"rmsnorm"_s, u"bf16"_s, 128, 128256, 8);
        const kev::Strategy s = rowwise.defaultStrategy(t, h200);
        QCOMPARE(s.params.value(u"split"_s).toInt(), 2);
        const auto jump = kev::bytesInFlightJump(rowwise, s, t, h200, 20.0);
        QVERIFY(jump);
        QCOMPARE(jump->param, u"split"_s);
        QCOMPARE(jump->evidence.value(u"to"_s).toDouble(), 8.0);
        // Without a split the jump moves another knob.
        const kev::Task many = rowTask(u"rmsnorm"_s, u"bf16"_s, 4096, 128256, 8);
        const auto other =
            kev::bytesInFlightJump(rowwise, rowwise.defaultStrategy(many, h200), many, h200, 20.0);
        QVERIFY(!other || other->param != u"split"_s);
    }

    // Each knob combination the split cannot run names the knob and what to use instead.
    void splitConstraintsNameTheKnob() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        const kev::Task t = rowTask(u"softmax"_s, u"f16"_s, 1, 128256, 8);
        // The streamed split (the bulk default's constraints are bulkConstraintsNameTheKnob's).
        const kev::Strategy s =
            withParam(rowwise.defaultStrategy(t, h200), u"pipeline"_s, u"none"_s);
        QVERIFY(rowwise.constraints(s, t, h200).isEmpty());
        const auto problems = [&](const kev::Strategy& x, const kev::DeviceInfo& d) {
            return rowwise.constraints(x, t, d).join(u"; "_s);
        };
        QVERIFY(problems(withParam(s, u"split"_s, 0), h200).contains(u"params.split=0"_s));
        QVERIFY(problems(withParam(s, u"split"_s, 3), h200).isEmpty());
        QVERIFY(problems(withParam(s, u"split"_s, 16), h200).contains(u"at most 8"_s));
        QVERIFY(problems(s, a100()).contains(u"sm_90"_s));
        QVERIFY(problems(withParam(s, u"stats"_s, u"two_pass"_s), h200)
                    .contains(u"use stats=one_pass"_s));
        kev::Strategy warp = withParam(s, u"mapping"_s, u"warp"_s);
        QVERIFY(problems(warp, h200).contains(u"use mapping=block"_s));
        QVERIFY(problems(withParam(s, u"ctas_per_sm"_s, 2), h200).contains(u"ctas_per_sm=0"_s));
        // Saved and loaded, the knob stays; a strategy without it reads as split=1.
        kev::Strategy bare = s;
        bare.params.remove(u"split"_s);
        QVERIFY(!rowwise.generate(bare, t).contains(u"__cluster_dims__"_s));
    }

    // Softmax rows longer than the registers cache, aligned for 16-byte vectors on sm_90: the
    // block's slice of the row copied whole into shared memory (pipeline=bulk), 8 warps, the
    // fewest blocks per row whose slices stay within 80 KB (docs/benchmarks.md, session 16), and
    // where the rows fill more than a round of resident blocks the most whose slices keep 30 KB,
    // whatever the count (session 25).
    void vocabularyRowsCopiedWholeIntoSharedMemory() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        const auto pipelineOf = [&](const kev::Task& t, const kev::DeviceInfo& d) {
            return rowwise.defaultStrategy(t, d).params.value(u"pipeline"_s).toString();
        };
        const auto splitOf = [&](const kev::Task& t) {
            return rowwise.defaultStrategy(t, h200).params.value(u"split"_s).toInt(1);
        };
        const kev::Task f16rows = rowTask(u"softmax"_s, u"f16"_s, 1048, 32000, 8);
        QCOMPARE(pipelineOf(f16rows, h200), u"bulk"_s);
        QCOMPARE(splitOf(f16rows), 2);
        QCOMPARE(rowwise.defaultStrategy(f16rows, h200).warps, 8);
        QCOMPARE(splitOf(rowTask(u"softmax"_s, u"bf16"_s, 1024, 32768, 8)), 2);
        QCOMPARE(splitOf(rowTask(u"softmax"_s, u"f16"_s, 800, 40000, 8)), 2);
        QCOMPARE(splitOf(rowTask(u"softmax"_s, u"bf16"_s, 664, 50257, 8)), 3);
        QCOMPARE(splitOf(rowTask(u"softmax"_s, u"f16"_s, 512, 65536, 8)), 4);
        QCOMPARE(splitOf(rowTask(u"softmax"_s, u"bf16"_s, 332, 100277, 8)), 6);
        QCOMPARE(splitOf(rowTask(u"softmax"_s, u"f16"_s, 256, 128256, 8)), 8);
        QCOMPARE(splitOf(rowTask(u"softmax"_s, u"bf16"_s, 216, 151936, 8)), 8);
        QCOMPARE(splitOf(rowTask(u"softmax"_s, u"bf16"_s, 128, 256000, 8)), 8);
        QCOMPARE(splitOf(rowTask(u"softmax"_s, u"f32"_s, 4096, 65536, 8)), 8);
        // Fewer rows than a round of resident blocks keep the fitted split: 256 rows of 32000
        // f16 whole (3 blocks of 64 KB per SM), 64 rows of 151936 bf16 in 4; a few rows of
        // 256000 bf16 in 7 slices of 71 KB (the fewest within 80 KB).
        const kev::Task fewRows = rowTask(u"softmax"_s, u"f16"_s, 256, 32000, 8);
        QCOMPARE(splitOf(fewRows), 1);
        QCOMPARE(splitOf(rowTask(u"softmax"_s, u"bf16"_s, 64, 151936, 8)), 4);
        QCOMPARE(splitOf(rowTask(u"softmax"_s, u"bf16"_s, 40, 256000, 8)), 7);
        // Rows of a million 16-bit elements: 8 slices of 256 KB do not fit a block: streamed.
        QCOMPARE(pipelineOf(rowTask(u"softmax"_s, u"f16"_s, 64, 1048576, 8), h200), u"none"_s);
        // Rows the registers hold, unaligned rows, other ops, and no sm_90: not bulk.
        QVERIFY(pipelineOf(rowTask(u"softmax"_s, u"bf16"_s, 2728, 12288, 8), h200) != u"bulk"_s);
        QCOMPARE(pipelineOf(rowTask(u"softmax"_s, u"f16"_s, 1048, 32000, 1), h200), u"none"_s);
        QVERIFY(pipelineOf(rowTask(u"layernorm"_s, u"f16"_s, 1048, 32000, 8), h200) != u"bulk"_s);
        QCOMPARE(pipelineOf(f16rows, a100()), u"none"_s);
        const kev::Strategy s = rowwise.defaultStrategy(fewRows, h200);
        QVERIFY2(s.rationale.contains(u"read once from DRAM"_s), qPrintable(s.rationale));
        const QString code = rowwise.generate(s, fewRows);
        QVERIFY(code.contains(u"cp.async.bulk.shared::cluster.global"_s));
        // Unsplit, still a launch of clusters (of one block: placed otherwise, 86.8% of the floor
        // against 80.7% without the attribute, session 23).
        QVERIFY(code.contains(u"__cluster_dims__(SPLIT, 1, 1)"_s));
        QVERIFY(code.contains(u"constexpr int SPLIT = 1;"_s));
        QVERIFY(code.contains(u"softmaxRowsBulk<<<"_s));
        // Slices and pieces on 128-byte lines from the row's first line boundary, the launch's
        // shared memory the longest slice (session 25: 2-8 points of the floor).
        QVERIFY(code.contains(u"bulkStride(N)"_s));
        QVERIFY(code.contains(u"const long long bytes = bulkSlice(N)"_s));
        // One exponential an element: the statistics pass stores them in X's type (under e^10
        // for f16, whose largest is 65504; e^20 otherwise), the output multiplies (session 26).
        QVERIFY(code.contains(u"constexpr float SLACK = 10.0f;"_s));
        QVERIFY(code.contains(u"storeVec(reinterpret_cast<ElemX*>(slab) + i * VEC, v);"_s));
        QVERIFY(code.contains(u"rescaleStored(slab, t, i, ml - mostL);"_s));
        QVERIFY(code.contains(u"writeScaled<true>(y, s, t, vectors, logScale);"_s));
        const kev::Task bf16Rows = rowTask(u"softmax"_s, u"bf16"_s, 664, 50257, 8);
        QVERIFY(rowwise.generate(rowwise.defaultStrategy(bf16Rows, h200), bf16Rows)
                    .contains(u"constexpr float SLACK = 20.0f;"_s));
        // A row or a few (fewer blocks than SMs even at 8 a row): the streamed split, whose
        // slices the registers hold (one row of 128256 f16: 8.4 us against 9.6 us).
        const kev::Task one = rowTask(u"softmax"_s, u"f16"_s, 16, 128256, 8);
        QCOMPARE(pipelineOf(one, h200), u"none"_s);
        QCOMPARE(rowwise.defaultStrategy(one, h200).params.value(u"split"_s).toInt(), 8);
        QCOMPARE(pipelineOf(rowTask(u"softmax"_s, u"f16"_s, 17, 128256, 8), h200), u"bulk"_s);
    }

    // Each knob combination the bulk kernel cannot run names the knob and what to use instead.
    void bulkConstraintsNameTheKnob() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        const kev::Task t = rowTask(u"softmax"_s, u"f16"_s, 256, 128256, 8);
        const kev::Strategy s = rowwise.defaultStrategy(t, h200);
        QCOMPARE(s.params.value(u"pipeline"_s).toString(), u"bulk"_s);
        QVERIFY(rowwise.constraints(s, t, h200).isEmpty());
        const auto problems = [&](const kev::Strategy& x, const kev::Task& task,
                                  const kev::DeviceInfo& d) {
            return rowwise.constraints(x, task, d).join(u"; "_s);
        };
        QVERIFY(problems(withParam(s, u"split"_s, 1), t, h200).contains(u"raise split"_s));
        QVERIFY(problems(withParam(s, u"ctas_per_sm"_s, 1), t, h200).contains(u"ctas_per_sm=0"_s));
        QVERIFY(problems(withParam(s, u"stats"_s, u"two_pass"_s), t, h200)
                    .contains(u"use stats=one_pass"_s));
        QVERIFY(problems(withParam(s, u"mapping"_s, u"warp"_s), t, h200)
                    .contains(u"use mapping=block"_s));
        kev::Strategy narrow = s;
        narrow.vectorWidth = 4;
        QVERIFY(problems(narrow, t, h200).contains(u"16-byte"_s));
        QVERIFY(problems(s, t, a100()).contains(u"sm_90"_s));
        const kev::Task norm = rowTask(u"layernorm"_s, u"f16"_s, 256, 128256, 8);
        QVERIFY(problems(s, norm, h200).contains(u"softmax only"_s));
        QVERIFY(problems(withParam(s, u"pipeline"_s, u"tma"_s), t, h200)
                    .contains(u"none, prefetch, async or bulk"_s));
    }
};

QTEST_GUILESS_MAIN(TstRowwiseRange)
#include "tst_rowwiserange.moc"
