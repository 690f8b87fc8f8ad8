// The GEMM families: defaults feasible on every library task, the ladder and priors, constraints,
// generated code and neighbour moves.
#include "builtintest.h"

using namespace Qt::StringLiterals;
using namespace kevtest;

class TestBuiltin : public QObject {
    Q_OBJECT

private slots:
    void defaultsAreFeasibleAndValid() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const auto tasks = kev::TaskLibrary().tasks();
        QVERIFY(!tasks.isEmpty());
        for (const kev::Task& t : tasks) {
            const auto families = kev::FamilyRegistry::instance().supporting(t, h200);
            QVERIFY2(!families.isEmpty(), qPrintable(t.name));
            for (const kev::KernelFamily* f : families) {
                const kev::Strategy s = f->defaultStrategy(t, h200);
                QVERIFY2(f->constraints(s, t, h200).isEmpty(),
                         qPrintable(t.name + u' ' + f->id() + u": "_s +
                                    f->constraints(s, t, h200).join(u"; "_s)));
                QVERIFY2(s.validate().isEmpty(), qPrintable(s.validate().join(u"; "_s)));
                QVERIFY(!s.rationale.isEmpty());
            }
        }
    }

    void fp32HasNoTensorCoreFamily() {
        const auto families = kev::FamilyRegistry::instance().supporting(
            task(u"gemm_fp32_fp32_4096"_s), kev::DeviceInfo::h200());
        QStringList ids;
        for (const kev::KernelFamily* f : families)
            ids << f->id();
        QCOMPARE(ids, (QStringList{u"fma_tiled"_s, u"fma_regblock"_s, u"fma_warptile"_s}));
    }

    void ladderOrderAndPriors() {
        const QStringList ladder{u"fma_tiled"_s, u"fma_regblock"_s, u"wmma"_s, u"mma_sync"_s};
        const auto all = kev::FamilyRegistry::instance().families();
        QStringList ids;
        for (const kev::KernelFamily* f : all) {
            if (ladder.contains(f->id()))
                ids << f->id();
        }
        QCOMPARE(ids, ladder);
        for (const QString& name : {u"gemm_fp16_fp32_4096"_s, u"gemm_fp32_fp32_4096"_s}) {
            const kev::Task t = task(name);
            QVERIFY(kev::knowledge::familyPrior(u"fma_tiled"_s, t) <
                    kev::knowledge::familyPrior(u"fma_regblock"_s, t));
        }
        const kev::Task fp16 = task(u"gemm_fp16_fp32_4096"_s);
        QVERIFY(kev::knowledge::familyPrior(u"fma_regblock"_s, fp16) <
                kev::knowledge::familyPrior(u"wmma"_s, fp16));
        QVERIFY(kev::knowledge::familyPrior(u"wmma"_s, fp16) <
                kev::knowledge::familyPrior(u"mma_sync"_s, fp16));
        QVERIFY(kev::knowledge::familyPrior(u"mma_sync"_s, fp16) <
                kev::knowledge::familyPrior(u"wgmma_tma"_s, fp16));
    }

    void fmaTiledConstraints() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& tiled = family(u"fma_tiled"_s);
        // Every dtype combination of the registry, A and B may differ.
        kev::Task mixed = task(u"gemm_fp32_fp32_4096"_s);
        mixed.a = u"bf16"_s;
        mixed.b = u"f16"_s;
        mixed.c = u"bf16"_s;
        QVERIFY(tiled.supports(mixed, h200));
        const kev::Strategy s = tiled.defaultStrategy(mixed, h200);
        QVERIFY2(tiled.constraints(s, mixed, h200).isEmpty(),
                 qPrintable(tiled.constraints(s, mixed, h200).join(u"; "_s)));
        const QString code = tiled.generate(s, mixed);
        QVERIFY(code.contains(u"using InputA = __nv_bfloat16;"_s));
        QVERIFY(code.contains(u"using InputB = __half;"_s));
        QVERIFY(code.contains(u"constexpr int ROW = TILE + 1;"_s));
        QVERIFY(!code.contains(u"${"_s));

        kev::Strategy big = s;
        big.blockM = 64;
        tiled.normalize(big);
        QVERIFY(tiled.constraints(big, mixed, h200).join(u' ').contains(u"tile=64"_s));

        kev::Strategy odd = s;
        odd.params.insert(u"thread_tile_n"_s, 3);
        QVERIFY(tiled.constraints(odd, mixed, h200).join(u' ').contains(u"thread_tile_n=3"_s));

        kev::Strategy skewed = s;
        skewed.blockN = 16;
        QVERIFY(tiled.constraints(skewed, mixed, h200).join(u' ').contains(u"square"_s));

        // 16x16 with 4 outputs per thread is 64 threads; the warps field must say so.
        kev::Strategy small = s;
        small.blockM = 16;
        small.params.insert(u"thread_tile_n"_s, 4);
        QVERIFY(tiled.constraints(small, mixed, h200).join(u' ').contains(u"warps="_s));
        tiled.normalize(small);
        QCOMPARE(small.warps, 2);
        QVERIFY(tiled.constraints(small, mixed, h200).isEmpty());

        kev::DeviceInfo pascal = h200;
        pascal.ccMajor = 6;
        QVERIFY(!tiled.constraints(s, mixed, pascal).isEmpty());

        const auto moves = tiled.neighbours(s);
        QVERIFY(moves.size() >= 2);
        for (const kev::Strategy& m : moves) {
            QVERIFY(m != s);
            QCOMPARE(m.blockN, m.blockM);
            QCOMPARE(m.blockK, m.blockM);
            QVERIFY2(tiled.constraints(m, mixed, h200).isEmpty(),
                     qPrintable(tiled.constraints(m, mixed, h200).join(u"; "_s)));
        }
    }

    void wmmaConstraints() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::KernelFamily& wmma = family(u"wmma"_s);
        QVERIFY(!wmma.supports(task(u"gemm_fp32_fp32_4096"_s), h200));
        const kev::Task t = task(u"gemm_bf16_bf16_8192"_s);
        const kev::Strategy s = wmma.defaultStrategy(t, h200);
        QCOMPARE(s.warps, 8);
        QCOMPARE(s.warps, (s.blockM / s.warpM) * (s.blockN / s.warpN));
        const QString code = wmma.generate(s, t);
        QVERIFY(code.contains(u"wmma::fragment<wmma::matrix_b, 16, 16, 16, Input, "
                              "wmma::row_major>"_s));
        QVERIFY(code.contains(u"using Input = __nv_bfloat16;"_s));
        QVERIFY(code.contains(u"store_matrix_sync"_s));
        QVERIFY(code.contains(u"cpAsyncWait<1>"_s));
        QVERIFY(!code.contains(u"${"_s));

        kev::Strategy single = s;
        single.stages = 1;
        const QString singleCode = wmma.generate(single, t);
        QVERIFY(!singleCode.contains(u"cpAsyncWait<1>"_s));
        QVERIFY(!singleCode.contains(u"buf ^ 1"_s));

        kev::Strategy deep = s;
        deep.stages = 3;
        QVERIFY(wmma.constraints(deep, t, h200).join(u' ').contains(u"stages=3"_s));

        kev::Strategy wide = s;
        wide.blockN = 256;
        wmma.normalize(wide);
        QVERIFY(wmma.constraints(wide, t, h200).join(u' ').contains(u"block tile 128x256"_s));

        kev::Strategy bk = s;
        bk.blockK = 64;
        QVERIFY(wmma.constraints(bk, t, h200).join(u' ').contains(u"blockK=64"_s));

        kev::Strategy torn = s;
        torn.warpN = 24;
        QVERIFY(wmma.constraints(torn, t, h200).join(u' ').contains(u"warpN=24"_s));

        kev::Strategy mismatch = s;
        mismatch.warps = 4; // the warp tile still makes 8
        QVERIFY(wmma.constraints(mismatch, t, h200).join(u' ').contains(u"makes 8 warps"_s));

        kev::DeviceInfo volta = h200;
        volta.ccMajor = 7;
        QVERIFY(!wmma.supports(t, volta));

        const auto moves = wmma.neighbours(s);
        QVERIFY(moves.size() >= 4);
        for (const kev::Strategy& m : moves) {
            QVERIFY2(
                wmma.constraints(m, t, h200).isEmpty(),
                qPrintable(m.rationale + u": "_s + wmma.constraints(m, t, h200).join(u"; "_s)));
            QVERIFY2(m.validate().isEmpty(), qPrintable(m.validate().join(u"; "_s)));
        }
    }

    void constraintsRejectImpossibleConfigurations() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::Task t = task(u"gemm_fp16_fp32_4096"_s);
        const kev::KernelFamily& mma = family(u"mma_sync"_s);
        const kev::Strategy base = mma.defaultStrategy(t, h200);

        kev::Strategy big = base;
        big.blockM = 256;
        big.blockN = 256;
        big.blockK = 64;
        big.stages = 6;
        mma.normalize(big);
        QVERIFY(mma.constraints(big, t, h200).join(u' ').contains(u"opt-in limit"_s));

        kev::Strategy fat = base;
        fat.warpM = 128;
        fat.warpN = 128;
        mma.normalize(fat);
        QVERIFY(mma.constraints(fat, t, h200).join(u' ').contains(u"registers"_s));

        kev::Strategy odd = base;
        odd.warpN = 48;
        QVERIFY(!mma.constraints(odd, t, h200).isEmpty());

        kev::Strategy narrow = base;
        narrow.blockN = 32;
        narrow.warpN = 16;
        mma.normalize(narrow);
        QVERIFY(mma.constraints(narrow, t, h200).join(u' ').contains(u"swizzled"_s));

        kev::DeviceInfo volta = h200;
        volta.ccMajor = 7;
        QVERIFY(!mma.supports(t, volta));

        const kev::KernelFamily& fma = family(u"fma_regblock"_s);
        kev::Strategy s = fma.defaultStrategy(task(u"gemm_fp32_fp32_4096"_s), h200);
        s.params.insert(u"thread_tile_m"_s, 3);
        QVERIFY(fma.constraints(s, task(u"gemm_fp32_fp32_4096"_s), h200)
                    .join(u' ')
                    .contains(u"thread_tile_m=3"_s));
    }

    void generatedCodeHasOnlyTheChosenConfiguration() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::Task t = task(u"gemm_fp16_fp32_4096"_s);
        const kev::KernelFamily& mma = family(u"mma_sync"_s);
        kev::Strategy s = mma.defaultStrategy(t, h200);
        const QString swizzled = mma.generate(s, t);
        QVERIFY(swizzled.contains(u"constexpr int BLOCK_N = 256;"_s));
        QVERIFY(swizzled.contains(u"ldmatrix.sync.aligned.m8n8.x4.trans"_s));
        QVERIFY(swizzled.contains(u"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"_s));
        QVERIFY(!swizzled.contains(u"${"_s));
        QVERIFY(!swizzled.contains(u"SPLIT_K"_s));
        QVERIFY(!swizzled.contains(u"padded by"_s));
        s.smemLayout = u"padded"_s;
        mma.normalize(s);
        const QString padded = mma.generate(s, t);
        QVERIFY(padded.contains(u"BLOCK_K + 8"_s));
        QVERIFY(!padded.contains(u"chunk ^"_s));

        const kev::Task bf16 = task(u"gemm_bf16_bf16_8192"_s);
        const kev::KernelFamily& split = family(u"mma_sync_splitk"_s);
        const QString sk = split.generate(split.defaultStrategy(bf16, h200), bf16);
        QVERIFY(sk.contains(u"kevolve_workspace_bytes"_s));
        QVERIFY(sk.contains(u".bf16.bf16.f32"_s));
        QVERIFY(!sk.contains(u"atomicAdd"_s));
    }

    void neighboursMoveOneKnob() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        const kev::Task t = task(u"gemm_fp16_fp32_4096"_s);
        const kev::KernelFamily& mma = family(u"mma_sync"_s);
        const kev::Strategy s = mma.defaultStrategy(t, h200);
        const auto moves = mma.neighbours(s);
        QVERIFY(moves.size() >= 6);
        QSet<QString> keys;
        for (const kev::Strategy& m : moves) {
            QVERIFY(m != s);
            keys.insert(kev::configurationKey(mma, m));
            QCOMPARE(m.warps, (m.blockM / m.warpM) * (m.blockN / m.warpN));
        }
        QCOMPARE(keys.size(), moves.size());
    }
};

QTEST_GUILESS_MAIN(TestBuiltin)
#include "tst_builtin.moc"
