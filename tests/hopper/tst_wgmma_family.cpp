// The wgmma_tma family of the built-in backend without a GPU: constraint checks, the default
// strategy, and generated code for a fixed sample of parameter points compiled for sm_90a (PTX has
// wgmma.mma_async, ptxas reports no spills and does not serialise the wgmma pipeline).
#include "builtin/family_wgmma.h"
#include "core/deviceinfo.h"
#include "core/strategy.h"
#include "core/task.h"

#include <QJsonDocument>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <tuple>

using namespace kev;

Q_DECLARE_METATYPE(kev::WgmmaParams)

namespace {

Task gemmTask(const QString& name, const QString& a, const QString& c, qint64 size) {
    Task t;
    t.name = name;
    t.op = QStringLiteral("gemm");
    t.a = a;
    t.b = a;
    t.c = c;
    t.accumulate = QStringLiteral("f32");
    t.m = size;
    t.n = size;
    t.k = size;
    return t;
}

// An f16 -> f16 GEMM of M x N x K.
Task f16Gemm(const QString& name, qint64 m, qint64 n, qint64 k) {
    Task t = gemmTask(name, QStringLiteral("f16"), QStringLiteral("f16"), 4096);
    t.m = m;
    t.n = n;
    t.k = k;
    return t;
}

// `base` with the wgmma parameters `p`, normalised as the family does to every move.
Strategy withParams(const KernelFamily& family, Strategy base, const WgmmaParams& p) {
    p.applyTo(base);
    family.normalize(base);
    return base;
}

bool mentions(const QStringList& problems, const QString& word) {
    for (const QString& p : problems) {
        if (p.contains(word))
            return true;
    }
    return false;
}

} // namespace

class WgmmaFamilyTest : public QObject {
    Q_OBJECT

private slots:
    void offeredOnlyOnSm90() {
        const auto family = makeWgmmaTmaFamily();
        const Task task = gemmTask(QStringLiteral("gemm_fp16_fp32_4096"), QStringLiteral("f16"),
                                   QStringLiteral("f32"), 4096);
        DeviceInfo h200 = DeviceInfo::h200();
        QVERIFY(family->supports(task, h200));
        DeviceInfo ampere = h200;
        ampere.ccMajor = 8;
        QVERIFY(!family->supports(task, ampere));
        QVERIFY(mentions(wgmmaConstraints(WgmmaParams{}, task, ampere), QStringLiteral("sm_90a")));
        Task fp32 = task;
        fp32.a = fp32.b = QStringLiteral("f32");
        QVERIFY(!family->supports(fp32, h200));
    }

    void rejectsInfeasiblePoints() {
        const Task task = gemmTask(QStringLiteral("gemm_fp16_fp32_4096"), QStringLiteral("f16"),
                                   QStringLiteral("f32"), 4096);
        const DeviceInfo h200 = DeviceInfo::h200();
        QVERIFY(wgmmaConstraints(WgmmaParams{}, task, h200).isEmpty());

        WgmmaParams tooManyStages;
        tooManyStages.stages = 5; // 5 x 48 KiB
        QVERIFY(mentions(wgmmaConstraints(tooManyStages, task, h200), QStringLiteral("232448")));

        WgmmaParams tooManyAccumulators;
        tooManyAccumulators.blockM = 256; // 2 x m64n256 per warpgroup: 256 fp32 registers
        QVERIFY(mentions(wgmmaConstraints(tooManyAccumulators, task, h200),
                         QStringLiteral("registers")));

        WgmmaParams badN;
        badN.blockN = 100; // the wgmma N here: a multiple of 16 from 64 to 256
        QVERIFY(mentions(wgmmaConstraints(badN, task, h200), QStringLiteral("blockN")));
        badN.blockN = 272;
        QVERIFY(mentions(wgmmaConstraints(badN, task, h200), QStringLiteral("blockN")));
        badN.blockN = 48;
        QVERIFY(mentions(wgmmaConstraints(badN, task, h200), QStringLiteral("blockN")));
        WgmmaParams narrow; // 96 columns: one whole B chunk and half of the next
        narrow.blockN = 96;
        QVERIFY(wgmmaConstraints(narrow, task, h200).isEmpty());
        narrow.tmaStore = true; // f32 C: boxes of 32 columns divide 96
        QVERIFY(wgmmaConstraints(narrow, task, h200).isEmpty());
        narrow.blockN = 80; // ... but not 80
        QVERIFY(mentions(wgmmaConstraints(narrow, task, h200), QStringLiteral("boxes of 32")));

        // Three consumer warpgroups: the 192-row tile, 64 rows each, within the 128 registers
        // ptxas may use at 512 threads (the accumulators of 176 columns fit, of 192 do not).
        WgmmaParams three;
        three.consumerWarpgroups = 3;
        three.blockM = 192;
        three.blockN = 176;
        QVERIFY2(wgmmaConstraints(three, task, h200).isEmpty(),
                 qPrintable(wgmmaConstraints(three, task, h200).join(u'\n')));
        three.blockN = 192;
        QVERIFY(mentions(wgmmaConstraints(three, task, h200), QStringLiteral("128 registers")));
        three.blockN = 128;
        three.blockM = 128;
        QVERIFY(mentions(wgmmaConstraints(three, task, h200), QStringLiteral("blockM")));
        three.blockM = 192;
        three.pingPong = true;
        QVERIFY(mentions(wgmmaConstraints(three, task, h200), QStringLiteral("schedule")));
        WgmmaParams four;
        four.consumerWarpgroups = 4;
        QVERIFY(mentions(wgmmaConstraints(four, task, h200), QStringLiteral("consumerWarpgroups")));
        // Two consumers at 384 threads: ptxas's cap is 168, so 2 x m64n160 per warpgroup (160
        // accumulators) would spill although setmaxnreg grants 232.
        // Swapped operands: C's rows are the wgmma N (a multiple of 16), its columns one 64-column
        // B chunk per slice; cooperative, direct epilogue, no cluster.
        WgmmaParams swapped;
        swapped.swapped = true;
        swapped.blockM = 80;
        swapped.blockN = 128;
        swapped.stages = 8;
        swapped.consumerWarpgroups = 2;
        QVERIFY2(wgmmaConstraints(swapped, task, h200).isEmpty(),
                 qPrintable(wgmmaConstraints(swapped, task, h200).join(u'\n')));
        QCOMPARE(swapped.mmaN(), 80);
        QCOMPARE(swapped.mmaSlicesPerWarpgroup(), 1);
        QCOMPARE(swapped.accumulatorsPerThread(), 40);
        swapped.blockM = 88;
        QVERIFY(mentions(wgmmaConstraints(swapped, task, h200), QStringLiteral("swap_rows: 88")));
        swapped.blockM = 16;
        QVERIFY(wgmmaConstraints(swapped, task, h200).isEmpty());
        swapped.blockN = 192; // 1.5 slices per warpgroup
        QVERIFY(mentions(wgmmaConstraints(swapped, task, h200), QStringLiteral("blockN: 192")));
        swapped.blockN = 128;
        swapped.tmaStore = true;
        QVERIFY(mentions(wgmmaConstraints(swapped, task, h200), QStringLiteral("direct epilogue")));
        swapped.tmaStore = false;
        // A 2-CTA cluster multicasts the B chunks in either orientation (session 10: the default
        // at M = 160), but needs two chunks to split.
        swapped.clusterM = 2;
        QVERIFY2(wgmmaConstraints(swapped, task, h200).isEmpty(),
                 qPrintable(wgmmaConstraints(swapped, task, h200).join(u'\n')));
        swapped.blockN = 64;
        swapped.consumerWarpgroups = 1;
        QVERIFY(mentions(wgmmaConstraints(swapped, task, h200), QStringLiteral("blockN must be")));
        swapped.blockN = 128;
        swapped.consumerWarpgroups = 2;
        {
            // A cluster along M needs as many tile rows as CTAs.
            Task small = task;
            small.m = 16;
            QVERIFY(mentions(wgmmaConstraints(swapped, small, h200), QStringLiteral("no rows")));
        }
        swapped.clusterM = 1;
        swapped.blockM = 160; // 2 slices x 80 accumulators: over the 168 of 384 threads
        swapped.blockN = 256;
        QVERIFY(mentions(wgmmaConstraints(swapped, task, h200), QStringLiteral("168 registers")));
        {
            // Through a strategy: params.swap_rows carries the rows (block_m may be any multiple
            // of 16 then), and a normal strategy says 0.
            const auto family = makeWgmmaTmaFamily();
            Strategy st = family->defaultStrategy(task, h200);
            QCOMPARE(st.params.value(QLatin1String("swap_rows")).toInt(-1), 0);
            st.params.insert(QStringLiteral("swap_rows"), 80);
            st.blockM = 80;
            st.blockN = 128;
            st.stages = 8;
            st.epilogue = QStringLiteral("direct");
            family->normalize(st);
            QVERIFY2(st.validate().isEmpty(), qPrintable(st.validate().join(u'\n')));
            QVERIFY2(family->constraints(st, task, h200).isEmpty(),
                     qPrintable(family->constraints(st, task, h200).join(u'\n')));
            QVERIFY(WgmmaParams::fromStrategy(st).swapped);
            QCOMPARE(WgmmaParams::fromStrategy(st).blockM, 80);
            // Bad input is named, not read as the normal orientation.
            Strategy bad = st;
            bad.params.insert(QStringLiteral("swap_rows"), QStringLiteral("80"));
            QVERIFY(mentions(family->constraints(bad, task, h200),
                             QStringLiteral("params.swap_rows: \"80\" is not 0")));
            bad.params.insert(QStringLiteral("swap_rows"), -16);
            QVERIFY(mentions(family->constraints(bad, task, h200),
                             QStringLiteral("params.swap_rows: -16")));
            bad.params.insert(QStringLiteral("swap_rows"), 80.5);
            QVERIFY(mentions(family->constraints(bad, task, h200),
                             QStringLiteral("params.swap_rows: 80.5")));
            bad.params.insert(QStringLiteral("swap_rows"), 96);
            QVERIFY(mentions(family->constraints(bad, task, h200),
                             QStringLiteral("block_m: 80 differs from params.swap_rows 96")));
            st.params.insert(QStringLiteral("swap_rows"), 0);
            QVERIFY(!st.validate().isEmpty()); // 80 rows need the swapped orientation
        }

        WgmmaParams tall;
        tall.blockM = 256;
        tall.blockN = 160;
        tall.stages = 3;
        QVERIFY(mentions(wgmmaConstraints(tall, task, h200), QStringLiteral("168 registers")));
        tall.blockN = 128;
        QVERIFY(wgmmaConstraints(tall, task, h200).isEmpty());

        WgmmaParams badM;
        badM.blockM = 64; // 32 rows per consumer with two consumers
        QVERIFY(mentions(wgmmaConstraints(badM, task, h200), QStringLiteral("blockM")));

        const auto family = makeWgmmaTmaFamily();
        Strategy clustered = family->defaultStrategy(task, h200);
        clustered.clusterM = 2;
        QVERIFY(family->constraints(clustered, task, h200).isEmpty());
        clustered.clusterM = 4;
        QVERIFY(mentions(family->constraints(clustered, task, h200), QStringLiteral("clusterM")));
        clustered.clusterM = 1;
        clustered.clusterN = 2; // A multicast along N
        QVERIFY(family->constraints(clustered, task, h200).isEmpty());
        clustered.clusterM = 2; // 2x2: B along M and A along N
        QVERIFY(family->constraints(clustered, task, h200).isEmpty());
        clustered.clusterN = 3;
        QVERIFY(mentions(family->constraints(clustered, task, h200),
                         QStringLiteral("clusterN: 3 is not 1, 2 or 4")));
        {
            // A cluster along N wider than the tile columns: one CTA would have no columns.
            Task fewColumns = task;
            fewColumns.n = 256;
            WgmmaParams wide;
            wide.blockN = 128;
            wide.clusterN = 4;
            QVERIFY(mentions(wgmmaConstraints(wide, fewColumns, h200),
                             QStringLiteral("clusterN: N = 256")));
            wide.clusterN = 2;
            QVERIFY(wgmmaConstraints(wide, fewColumns, h200).isEmpty());
            // The A slices are whole 8-row swizzle groups: 80 rows in 4 slices of 24 load 96.
            WgmmaParams sliced;
            sliced.swapped = true;
            sliced.blockM = 80;
            sliced.blockN = 128;
            sliced.clusterN = 4;
            QCOMPARE(sliced.aRowsLoaded(), 96);
            sliced.clusterN = 2;
            QCOMPARE(sliced.aRowsLoaded(), 80);
            sliced.blockM = 224;
            sliced.clusterN = 4;
            QCOMPARE(sliced.aRowsLoaded(), 224);
            const qint64 smem2 = sliced.smemBytes();
            sliced.blockM = 80;
            QCOMPARE(smem2 - sliced.smemBytes(), qint64(sliced.stages) * (224 - 96) * 128);
            // Split-K runs in clusters: the cluster's CTAs take the same split of their tiles.
            sliced.splitK = 3;
            QVERIFY(wgmmaConstraints(sliced, task, h200).isEmpty());
            const QString code = generateWgmmaGemm(sliced, task);
            QVERIFY(code.contains(QStringLiteral("constexpr int kClusterN = 4;")));
            QVERIFY(code.contains(QStringLiteral("1x4-CTA clusters multicasting A")));
        }

        WgmmaParams oddChunks;
        oddChunks.blockN = 192; // 3 B chunks cannot be split over 2 CTAs
        oddChunks.clusterM = 2;
        QVERIFY(mentions(wgmmaConstraints(oddChunks, task, h200), QStringLiteral("clusterM")));

        // One chunk in a 2-CTA cluster along M (cuBLAS's M = 64 shape): only as two k-slabs, each
        // CTA loading half the chunk's rows with a half-height TMA box.
        WgmmaParams slabbed;
        slabbed.swapped = true;
        slabbed.blockM = 32;
        slabbed.blockN = 64;
        slabbed.stages = 16;
        slabbed.consumerWarpgroups = 1;
        slabbed.clusterM = 2;
        QVERIFY(mentions(wgmmaConstraints(slabbed, task, h200), QStringLiteral("b_slabs 2")));
        slabbed.bSlabs = 2;
        QVERIFY2(wgmmaConstraints(slabbed, task, h200).isEmpty(),
                 qPrintable(wgmmaConstraints(slabbed, task, h200).join(u'\n')));
        const QString slabCode = generateWgmmaGemm(slabbed, task);
        QVERIFY(slabCode.contains(QStringLiteral("constexpr uint32_t kBSlabs = 2;")));
        QVERIFY(slabCode.contains(QStringLiteral("ldb, 64, kBSlabRows)")));
        QVERIFY(slabCode.contains(QStringLiteral("each CTA half of its k-rows")));
        QVERIFY(!slabCode.contains(QStringLiteral("kOwnChunks"))); // unused there: nvcc warns
        Strategy slabStrategy;
        slabbed.applyTo(slabStrategy);
        QCOMPARE(slabStrategy.params.value(QStringLiteral("b_slabs")).toInt(), 2);
        QCOMPARE(WgmmaParams::fromStrategy(slabStrategy).bSlabs, 2);
        slabbed.clusterM = 1; // nothing to share the slabs with
        QVERIFY(mentions(wgmmaConstraints(slabbed, task, h200), QStringLiteral("b_slabs: 2")));
        slabbed.clusterM = 2;
        slabbed.bSlabs = 3; // one slab a CTA of the pair
        QVERIFY(mentions(wgmmaConstraints(slabbed, task, h200), QStringLiteral("b_slabs: 3")));
        // Three chunks (cuBLAS's M = 128 and 256 shape at N = 12288: 192-column tiles in pairs
        // along M): each CTA loads its slab of every chunk.
        oddChunks.bSlabs = 2;
        QVERIFY2(wgmmaConstraints(oddChunks, task, h200).isEmpty(),
                 qPrintable(wgmmaConstraints(oddChunks, task, h200).join(u'\n')));
        const QString threeChunks = generateWgmmaGemm(oddChunks, task);
        QVERIFY(threeChunks.contains(QStringLiteral("constexpr uint32_t kBSlabs = 2;")));
        QVERIFY(threeChunks.contains(QStringLiteral("for (uint32_t j = 0; j < kBChunks; ++j)")));
        // Unslabbed kernels keep their text: no slab constants, the whole-chunk box.
        const QString plain = generateWgmmaGemm(WgmmaParams(), task);
        QVERIFY(!plain.contains(QStringLiteral("kBSlab")));
        QVERIFY(plain.contains(QStringLiteral("ldb, 64, kTileK)")));

        WgmmaParams staged; // 4 x 48 KiB stages + 32 KiB C staging fit, 5 x 40 KiB + 32 KiB do not
        staged.tmaStore = true;
        QVERIFY(wgmmaConstraints(staged, task, h200).isEmpty());
        staged.blockN = 192;
        staged.stages = 5;
        QVERIFY(mentions(wgmmaConstraints(staged, task, h200), QStringLiteral("tma_store")));
        staged.tmaStore = false;
        QVERIFY(wgmmaConstraints(staged, task, h200).isEmpty());

        WgmmaParams pingPong; // each warpgroup a whole 128x128 tile: 128 accumulators
        pingPong.pingPong = true;
        pingPong.blockN = 128;
        pingPong.stages = 6;
        pingPong.tmaStore = true;
        QVERIFY(wgmmaConstraints(pingPong, task, h200).isEmpty());
        QCOMPARE(pingPong.mmaSlicesPerWarpgroup(), 2);
        pingPong.blockN = 256; // a whole 128x256 tile per warpgroup: 256 accumulators
        pingPong.stages = 4;
        QVERIFY(mentions(wgmmaConstraints(pingPong, task, h200), QStringLiteral("registers")));
        pingPong.blockM = 64;
        QVERIFY(wgmmaConstraints(pingPong, task, h200).isEmpty());
        pingPong.consumerWarpgroups = 1;
        QVERIFY(mentions(wgmmaConstraints(pingPong, task, h200), QStringLiteral("schedule")));

        Strategy scheduled = family->defaultStrategy(task, h200);
        QCOMPARE(scheduled.params.value(QLatin1String("schedule")).toString(),
                 QStringLiteral("cooperative"));
        scheduled.params.insert(QStringLiteral("schedule"), QStringLiteral("pingpong"));
        scheduled.blockN = 128;
        QVERIFY(WgmmaParams::fromStrategy(scheduled).pingPong);
        QVERIFY(family->constraints(scheduled, task, h200).isEmpty());
        QVERIFY(generateWgmmaGemm(WgmmaParams::fromStrategy(scheduled), task)
                    .contains(QStringLiteral("constexpr bool kPingPong = true;")));

        Strategy badEpilogue = family->defaultStrategy(task, h200);
        badEpilogue.epilogue = QStringLiteral("smem");
        QVERIFY(mentions(family->constraints(badEpilogue, task, h200), QStringLiteral("epilogue")));
    }

    void defaultStrategyIsValidAndFeasible() {
        const auto family = makeWgmmaTmaFamily();
        const DeviceInfo h200 = DeviceInfo::h200();
        for (const Task& task : {gemmTask(QStringLiteral("gemm_fp16_fp32_4096"),
                                          QStringLiteral("f16"), QStringLiteral("f32"), 4096),
                                 gemmTask(QStringLiteral("small"), QStringLiteral("bf16"),
                                          QStringLiteral("bf16"), 512)}) {
            const Strategy s = family->defaultStrategy(task, h200);
            QCOMPARE(s.family, QStringLiteral("wgmma_tma"));
            QVERIFY2(s.validate().isEmpty(), qPrintable(s.validate().join(u'\n')));
            QVERIFY2(family->constraints(s, task, h200).isEmpty(),
                     qPrintable(family->constraints(s, task, h200).join(u'\n')));
            for (const Strategy& n : family->neighbours(s))
                QCOMPARE(n.warps, 4 * (n.consumerWarpgroups + 1));
        }
    }

    void generatedCodeCompilesForSm90a_data() {
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("c");
        QTest::addColumn<WgmmaParams>("params");
        struct Row {
            const char* name;
            const char* a;
            const char* c;
            int blockM, blockN, stages, consumers, cluster, split;
            bool grouped, tmaStore, pingPong, swapped;
        };
        const Row rows[] = {
            {"f16-f32 128x256 s4 c2 grouped tma_store", "f16", "f32", 128, 256, 4, 2, 1, 1, true,
             true, false, false},
            {"f16-f32 128x256 s4 c2 grouped direct", "f16", "f32", 128, 256, 4, 2, 1, 1, true,
             false, false, false},
            {"f16-f32 128x256 s4 c2 grouped cluster2 tma_store", "f16", "f32", 128, 256, 4, 2, 2, 1,
             true, true, false, false},
            {"bf16-bf16 256x128 s4 c2 row cluster2 tma_store", "bf16", "bf16", 256, 128, 4, 2, 2, 1,
             false, true, false, false},
            {"f16-f16 64x192 s5 c1 grouped direct", "f16", "f16", 64, 192, 5, 1, 1, 1, true, false,
             false, false},
            {"f16-f32 128x128 s6 pingpong grouped tma_store", "f16", "f32", 128, 128, 6, 2, 1, 1,
             true, true, true, false},
            {"bf16-bf16 64x256 s4 pingpong grouped cluster2 tma_store", "bf16", "bf16", 64, 256, 4,
             2, 2, 1, true, true, true, false},
            // Widths that are not a multiple of 64 (the last B chunk loaded whole, half used) and
            // the 192-row tile of three consumer warpgroups.
            {"f16-f16 192x96 s5 c3 grouped direct", "f16", "f16", 192, 96, 5, 3, 1, 1, true, false,
             false, false},
            {"bf16-bf16 192x176 s4 c3 grouped split 2", "bf16", "bf16", 192, 176, 4, 3, 1, 2, true,
             false, false, false},
            {"f16-f32 192x160 s3 c3 grouped tma_store", "f16", "f32", 192, 160, 3, 3, 1, 1, true,
             true, false, false},
            {"bf16-bf16 256x96 s4 c2 grouped direct", "bf16", "bf16", 256, 96, 4, 2, 1, 1, true,
             false, false, false},
            {"f16-f16 128x112 s6 c2 grouped split 3", "f16", "f16", 128, 112, 6, 2, 1, 3, true,
             false, false, false},
            // Swapped operands: C's rows are the wgmma N.
            {"bf16-bf16 swapped 80x128 s5 c2", "bf16", "bf16", 80, 128, 5, 2, 1, 1, true, false,
             false, true},
            {"bf16-bf16 swapped 224x128 s5 c2 split 3", "bf16", "bf16", 224, 128, 5, 2, 1, 3, true,
             false, false, true},
            {"f16-f32 swapped 16x64 s8 c1 split 2", "f16", "f32", 16, 64, 8, 1, 1, 2, true, false,
             false, true},
            // The M = 160 default: a pair of 80-row swapped tiles in a 2-CTA cluster.
            {"f16-f16 swapped 80x128 s8 c2 cluster 2", "f16", "f16", 80, 128, 8, 2, 2, 1, true,
             false, false, true},
        };
        for (const Row& r : rows) {
            WgmmaParams p;
            p.blockM = r.blockM;
            p.blockN = r.blockN;
            p.stages = r.stages;
            p.consumerWarpgroups = r.consumers;
            p.groupedRaster = r.grouped;
            p.groupM = 4;
            p.clusterM = r.cluster;
            p.tmaStore = r.tmaStore;
            p.pingPong = r.pingPong;
            p.splitK = r.split;
            p.swapped = r.swapped;
            QTest::newRow(r.name) << QString::fromLatin1(r.a) << QString::fromLatin1(r.c) << p;
        }
    }

    void generatedCodeCompilesForSm90a() {
        QFETCH(QString, a);
        QFETCH(QString, c);
        QFETCH(WgmmaParams, params);
        const WgmmaParams& p = params;
        const QString nvcc = QStringLiteral(KEV_TEST_NVCC);
        if (nvcc.isEmpty())
            QSKIP("no nvcc");
        const Task task = gemmTask(QStringLiteral("gemm_test"), a, c, 4096);
        QVERIFY2(wgmmaConstraints(p, task, DeviceInfo::h200()).isEmpty(),
                 qPrintable(wgmmaConstraints(p, task, DeviceInfo::h200()).join(u'\n')));
        const QString source = generateWgmmaGemm(p, task);
        QVERIFY2(!source.contains(QStringLiteral("${")), "unfilled placeholder");
        QVERIFY(source.startsWith(QStringLiteral("// expect: ok\n// task: gemm_test.json\n")));

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString cu = dir.filePath(QStringLiteral("kernel.cu"));
        QFile file(cu);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(source.toUtf8());
        file.close();

        const QStringList common = {QStringLiteral("-O3"), QStringLiteral("-std=c++17"),
                                    QStringLiteral("-gencode=arch=compute_90a,code=sm_90a"),
                                    QStringLiteral("-I"), QStringLiteral(KEV_TEST_ABI_INCLUDE)};
        QProcess compile;
        compile.setProcessChannelMode(QProcess::MergedChannels);
        compile.start(nvcc, QStringList{QStringLiteral("-shared"), QStringLiteral("-cudart"),
                                        QStringLiteral("shared"), QStringLiteral("-Xcompiler"),
                                        QStringLiteral("-fPIC"), QStringLiteral("-Xptxas"),
                                        QStringLiteral("-v"), QStringLiteral("-o"),
                                        dir.filePath(QStringLiteral("kernel.so")), cu} +
                                common);
        QVERIFY(compile.waitForFinished(300000));
        const QString log = QString::fromUtf8(compile.readAll());
        QVERIFY2(compile.exitCode() == 0, qPrintable(log));
        QVERIFY2(log.contains(QStringLiteral("0 bytes spill stores, 0 bytes spill loads")),
                 qPrintable(log));
        QVERIFY2(!log.contains(QStringLiteral("bytes spill stores, ")) ||
                     log.count(QStringLiteral(" 0 bytes spill stores")) ==
                         log.count(QStringLiteral("bytes spill stores")),
                 qPrintable(log));
        QVERIFY2(!log.contains(QStringLiteral("serialized")), qPrintable(log));
        QVERIFY2(!log.contains(QStringLiteral("C7508")), qPrintable(log));

        QProcess ptx;
        ptx.setProcessChannelMode(QProcess::MergedChannels);
        ptx.start(nvcc, QStringList{QStringLiteral("-ptx"), QStringLiteral("-o"),
                                    dir.filePath(QStringLiteral("kernel.ptx")), cu} +
                            common);
        QVERIFY(ptx.waitForFinished(300000));
        QVERIFY2(ptx.exitCode() == 0, ptx.readAll().constData());
        QFile ptxFile(dir.filePath(QStringLiteral("kernel.ptx")));
        QVERIFY(ptxFile.open(QIODevice::ReadOnly));
        const QByteArray text = ptxFile.readAll();
        const QByteArray mma = "wgmma.mma_async.sync.aligned.m64n" + QByteArray::number(p.mmaN()) +
                               "k16.f32." + (a == QLatin1String("bf16") ? "bf16" : "f16");
        QVERIFY2(text.contains(mma), mma.constData());
        // scale-d, imm-scale-a 1, imm-scale-b 1, then imm-trans-a and imm-trans-b: swapped, the A
        // operand is a B chunk (MN-major) and the B operand the A tile (K-major).
        QVERIFY(text.contains(p.swapped ? "p, 1, 1, 1, 0;" : "p, 1, 1, 0, 1;"));
        QCOMPARE(text.contains("griddepcontrol.wait"), p.splitK > 1);
        QVERIFY(text.contains("cp.async.bulk.tensor.2d"));
        QVERIFY(text.contains("setmaxnreg.inc.sync.aligned.u32"));
        QCOMPARE(text.contains("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"),
                 p.tmaStore);
        QCOMPARE(text.contains(".multicast::cluster"), p.clusterM > 1);
        // Swapped tiles of a 16-bit C transpose their 8x8 blocks in registers for 32-bit stores
        // (with split-K the tile goes to fp32 partials instead).
        QCOMPARE(text.contains("movmatrix.sync.aligned.m8n8.trans.b16"),
                 p.swapped && c != QLatin1String("f32") && p.splitK == 1);
        // A cluster-scope release on the stage hand-back compiles to MEMBAR.ALL.GPU in every
        // k-block (0.60x cuBLAS on an H200); the remote arrival keeps the default semantics.
        QVERIFY(!text.contains("mbarrier.arrive.release.cluster"));
        QCOMPARE(text.contains("mbarrier.arrive.shared::cluster.b64"), p.clusterM > 1);
        // Only the ping-pong turn hands over with bar.arrive.
        QCOMPARE(text.contains("bar.arrive"), p.pingPong);
    }

    // The tensor-bound small-M default pairs two swapped tiles, grouped by column strip, where
    // the pairs fill 70-100% of one round (split along K where the model splits), up to M = 192
    // (measured: M = 160, 192); elsewhere not.
    void pairDefault() {
        const DeviceInfo h200 = DeviceInfo::h200();
        const auto pick = [&](int m, int n, int k) {
            const Task task = f16Gemm(QStringLiteral("gemm_pair"), m, n, k);
            QString why;
            const WgmmaParams p = smallMWgmmaParams(task, h200, &why);
            if (!wgmmaConstraints(p, task, h200).isEmpty())
                qWarning() << wgmmaConstraints(p, task, h200);
            return p;
        };
        const auto isPair = [](const WgmmaParams& q, int rows) {
            return q.swapped && q.blockM == rows && q.blockN == 128 && q.consumerWarpgroups == 2 &&
                   q.groupedRaster && q.groupM == 2 && q.clusterM == 1 && q.splitK == 1;
        };
        QVERIFY(isPair(pick(160, 8192, 4096), 80));     // 128 CTAs
        QVERIFY(isPair(pick(192, 6144, 4096), 96));     // 96 CTAs
        QVERIFY(!isPair(pick(224, 5120, 5120), 112));   // 80 CTAs: too few
        QVERIFY(isPair(pick(208, 7168, 7168), 112));    // 112 CTAs (measured 0.90x, not 0.77x)
        QVERIFY(!isPair(pick(160, 16384, 4096), 80));   // 256 CTAs: two rounds
        const WgmmaParams wide = pick(256, 8192, 4096); // 128 CTAs, but M = 256: normal tiles
        QVERIFY(!wide.swapped);
        // Two normal tile rows in more than one round share B in clusters of 2 along M (M = 256,
        // N = 128256: 0.75x -> 0.99x); in one round not (N = 14336: clusters lost).
        const WgmmaParams lmHead = pick(256, 128256, 4096);
        QVERIFY(!lmHead.swapped);
        QCOMPARE(lmHead.clusterM, 2);
        QCOMPARE(pick(256, 14336, 4096).clusterM, 1);
        QCOMPARE(wide.clusterM, 1);
        // Too few column strips, where the model splits 64-column tiles along K: the pair in as
        // few splits as make 70-100% of one round (M = 160, N = 4096, K = 11008: 64 CTAs x 2;
        // measured 1.03-1.04x against 0.82x). Where the model's split tile is 128 wide (M = 192:
        // 192x128 split 4, 1.46x against 1.40x) or needs no split (K = 4096), its choice stands.
        const auto splitPair = [&](const WgmmaParams& q, int rows, int split) {
            WgmmaParams one = q;
            one.splitK = 1;
            return isPair(one, rows) && q.splitK == split && !q.splitInCluster;
        };
        QVERIFY(splitPair(pick(160, 4096, 11008), 80, 2));
        const WgmmaParams whole = pick(192, 4096, 11008);
        QVERIFY(whole.swapped);
        QCOMPARE(whole.blockM, 192);
        QCOMPARE(whole.blockN, 128);
        QCOMPARE(whole.splitK, 4);
        const WgmmaParams unsplit = pick(160, 4096, 4096);
        QCOMPARE(unsplit.splitK, 1);
        QCOMPARE(unsplit.blockN, 64);

        // Tensor-bound swapped tiles keep their ring within 196 KiB, one stage short of what
        // fits (measured: M = 160 and 224, N = 14336; the M = 160 split pair); normal tiles
        // take the deepest that fits (M = 256, K = 11008: 7 stages of 128x128, 224 KiB).
        for (const auto& [m, n, k, stages] :
             {std::tuple{160, 14336, 4096, 5}, std::tuple{224, 14336, 4096, 4},
              std::tuple{160, 4096, 11008, 7}}) {
            const WgmmaParams q = pick(m, n, k);
            QVERIFY(q.swapped);
            QCOMPARE(q.stages, stages);
            QVERIFY(q.stages * q.stageBytes() <= 196 * 1024);
            WgmmaParams deeper = q;
            ++deeper.stages;
            QVERIFY(deeper.smemBytes() <= h200.smemPerBlockOptin); // it fits, and is not taken
        }
        const WgmmaParams normal = pick(256, 4096, 11008);
        QVERIFY(!normal.swapped);
        QCOMPARE(normal.stages, 7);
        QVERIFY(normal.stages * normal.stageBytes() > 196 * 1024);

        // The ring holds 7.5-8.5 MB of the first round's B in flight, a column strip's B counted
        // once: no deeper than the first depth past 8.5 MB (M = 96, N = 12288: 96 strips of 16
        // KiB, 6 stages, where 8 fit and measured 6% slower), deeper than 8 to reach 7.5 MB when
        // memory-bound (M = 32, N = 5120: 12 stages), the unsplit pairs at their deepest (two
        // tile rows share B: M = 160, N = 8192, 8 stages, 208 KiB), and never under 4.
        const auto bInFlight = [&](const WgmmaParams& q, int m, int n) {
            const qint64 rows = (m + q.blockM - 1) / q.blockM;
            const qint64 ctas = std::min<qint64>(q.tiles(m, n) * q.splitK, h200.smCount);
            return double(ctas / (q.groupM >= rows ? rows : 1)) * q.stages * 64 * 2 * q.blockN;
        };
        const WgmmaParams m96 = pick(96, 12288, 4096);
        QCOMPARE(m96.stages, 6);
        QVERIFY(bInFlight(m96, 96, 12288) > 8.5e6);
        WgmmaParams shallower = m96;
        --shallower.stages;
        QVERIFY(bInFlight(shallower, 96, 12288) < 8.5e6);
        QCOMPARE(pick(96, 14336, 4096).stages, 5);
        QCOMPARE(pick(32, 5120, 5120).stages, 12);
        const WgmmaParams pair = pick(160, 8192, 4096);
        QCOMPARE(pair.stages, 8);
        QVERIFY(pair.stages * pair.stageBytes() > 196 * 1024);
        for (int n : {2048, 28672, 128256})
            QVERIFY(pick(1, n, 8192).stages >= 4);

        // Memory-bound swapped tiles in clusters of 4 along N (A multicast) only where their 128
        // columns make at most two thirds of the SMs in tiles (measured: N = 11008, 86 tiles;
        // mixed at 96, lost at 112).
        const WgmmaParams few = pick(96, 11008, 4096);
        QVERIFY(few.swapped);
        QCOMPARE(few.blockN, 128);
        QCOMPARE(few.clusterN, 4);
        QCOMPARE(few.aRowsLoaded(), 96);
        QCOMPARE(pick(80, 11008, 4096).clusterN, 4);
        QCOMPARE(pick(96, 12288, 4096).clusterN, 1); // 96 tiles
        QCOMPARE(pick(80, 14336, 4096).clusterN, 1); // 112 tiles
        QCOMPARE(pick(96, 14336, 4096).clusterN, 1);
        QCOMPARE(pick(128, 4096, 4096).clusterN, 1); // M a multiple of 64: normal tiles

        // Tensor-bound 128-row tiles the model splits three ways: 128x128 in two splits where
        // they make 90-100% of one round (M = 256, N = 4096, K = 11008: 128 units; measured
        // 0.98x against 0.93x), not where they would not (N = 5120: 160 units, two rounds).
        const WgmmaParams halves = pick(256, 4096, 11008);
        QVERIFY(!halves.swapped);
        QCOMPARE(halves.blockM, 128);
        QCOMPARE(halves.blockN, 128);
        QCOMPARE(halves.splitK, 2);
        QVERIFY(!halves.splitInCluster);
        const WgmmaParams wider = pick(256, 5120, 11008);
        QVERIFY(!(wider.blockN == 128 && wider.splitK == 2 && wider.blockM == 128));

        // From the pair at M = 160 in a 2-CTA cluster, doubling the rows to 160 would leave each
        // cluster's second CTA without rows: that move is refused, not measured.
        const auto family = makeWgmmaTmaFamily();
        const Task task = f16Gemm(QStringLiteral("gemm_pair"), 160, 8192, 4096);
        Strategy clusteredPair = family->defaultStrategy(task, h200);
        clusteredPair.clusterM = 2;
        int doubled = 0;
        for (const Strategy& n : family->neighbours(clusteredPair)) {
            const WgmmaParams q = WgmmaParams::fromStrategy(n);
            if (q.swapped && q.blockM == 160 && q.clusterM == 2) {
                ++doubled;
                QVERIFY(mentions(family->constraints(n, task, h200), QStringLiteral("no rows")));
            }
        }
        QCOMPARE(doubled, 1);
    }

    // Split-K one up or down with the width scaled so the work units stay: from 128x192 split 3
    // (132 units at M = 256, N = 4096) to 128x128 split 2 (128) and 128x256 split 4 (128).
    void splitMovesKeepTheWorkUnits() {
        const auto family = makeWgmmaTmaFamily();
        const DeviceInfo h200 = DeviceInfo::h200();
        const Task task = f16Gemm(QStringLiteral("gemm_m256"), 256, 4096, 11008);
        Strategy start = family->defaultStrategy(task, h200);
        WgmmaParams p = WgmmaParams::fromStrategy(start);
        p.blockM = 128;
        p.blockN = 192;
        p.consumerWarpgroups = 2;
        p.splitK = 3;
        p.swapped = false;
        p.tmaStore = false;
        p.stages = 5;
        start = withParams(*family, start, p);
        QVERIFY2(family->constraints(start, task, h200).isEmpty(),
                 qPrintable(family->constraints(start, task, h200).join(u'\n')));
        QSet<QString> moves;
        for (const Strategy& n : family->neighbours(start)) {
            if (!n.rationale.startsWith(QLatin1String("split_k ")) ||
                !n.rationale.contains(QLatin1String("the same work units")))
                continue;
            const WgmmaParams q = WgmmaParams::fromStrategy(n);
            moves.insert(QStringLiteral("%1x%2").arg(q.blockN).arg(q.splitK));
            QVERIFY2(family->constraints(n, task, h200).isEmpty(), qPrintable(n.rationale));
        }
        QCOMPARE(moves, (QSet<QString>{QStringLiteral("128x2"), QStringLiteral("256x4")}));
    }

    // The orientation moves as whole tiles: a swapped tile's rows halve or double or turn back to
    // the normal orientation, never a step of 16 rows (a second tile row of 16 at M = 160); a
    // normal tile swaps keeping its rows.
    void orientationMovesAreWholeTiles() {
        const auto family = makeWgmmaTmaFamily();
        const DeviceInfo h200 = DeviceInfo::h200();
        const Task task = f16Gemm(QStringLiteral("gemm_m160"), 160, 8192, 4096);
        // M = 160 in one swapped tile (the default at M = 160 is the pair of 80-row tiles, here
        // in a 2-CTA cluster, below).
        Strategy start = family->defaultStrategy(task, h200);
        QCOMPARE(start.params.value(QLatin1String("swap_rows")).toInt(), 80);
        QCOMPARE(start.clusterM, 1);
        QCOMPARE(start.blockN, 128);
        start.clusterM = 2;
        {
            // Groups count cluster units: 1, 2 and 3 block rows are the same kernel with a
            // cluster of 2, so they normalize to one strategy (deduplicated by parameters).
            Strategy a = start;
            Strategy b = start;
            a.groupSize = 1;
            b.groupSize = 3;
            family->normalize(a);
            family->normalize(b);
            QCOMPARE(a.groupSize, 2);
            QCOMPARE(b.groupSize, 2);
            QCOMPARE(family->generate(a, task), family->generate(start, task));
        }
        WgmmaParams one = WgmmaParams::fromStrategy(start);
        one.blockM = 160;
        one.blockN = 64;
        one.consumerWarpgroups = 1;
        one.clusterM = 1;
        start = withParams(*family, start, one);
        QVERIFY2(family->constraints(start, task, h200).isEmpty(),
                 qPrintable(family->constraints(start, task, h200).join(u'\n')));
        QSet<int> rows;
        bool normal = false;
        for (const Strategy& n : family->neighbours(start)) {
            const WgmmaParams p = WgmmaParams::fromStrategy(n);
            if (!n.rationale.startsWith(QLatin1String("swap_rows ")))
                continue;
            if (p.swapped) {
                rows.insert(p.blockM);
            } else {
                normal = true;
                QCOMPARE(p.blockM, 192);
                QCOMPARE(p.consumerWarpgroups, 3);
                QVERIFY2(family->constraints(n, task, h200).isEmpty(),
                         qPrintable(family->constraints(n, task, h200).join(u'\n')));
            }
        }
        QCOMPARE(rows, (QSet<int>{80}));
        QVERIFY(normal);

        Strategy big =
            family->defaultStrategy(gemmTask(QStringLiteral("gemm_fp16_fp32_4096"),
                                             QStringLiteral("f16"), QStringLiteral("f32"), 4096),
                                    h200);
        bool swaps = false;
        for (const Strategy& n : family->neighbours(big)) {
            const WgmmaParams p = WgmmaParams::fromStrategy(n);
            if (p.swapped) {
                swaps = true;
                QCOMPARE(p.blockM, 128);
                QCOMPARE(p.blockN, 128);
                QVERIFY(!p.tmaStore);
            }
        }
        QVERIFY(swaps);
    }
};

QTEST_GUILESS_MAIN(WgmmaFamilyTest)
#include "tst_wgmma_family.moc"
