// Families' constraints and defaults, the reviewer's rules on recorded-format reports, and the
// planner's search (first plan, review moves, no re-measurement).
#include "builtin/builtinplanner.h"
#include "builtin/builtinreviewer.h"
#include "builtin/kernelfamily.h"
#include "builtin/knowledgebase.h"
#include "deviceinfo.h"
#include "evaluationreport.h"
#include "task.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QTest>

using namespace Qt::StringLiterals;

namespace {

kev::Task task(const QString& name) {
    QString error;
    auto t = kev::TaskLibrary().resolve(name, &error);
    if (!t)
        qFatal("task %s: %s", qPrintable(name), qPrintable(error));
    return *t;
}

const kev::KernelFamily& family(const QString& id) {
    const kev::KernelFamily* f = kev::FamilyRegistry::instance().find(id);
    if (!f)
        qFatal("no family %s", qPrintable(id));
    return *f;
}

// A report in harness/PROTOCOL.md's format.
kev::EvaluationReport report(const QString& status, double speedup = 0.0, qint64 spill = 0,
                             const QJsonObject& profile = {}) {
    QJsonObject json{
        {u"schema_version"_s, 1},
        {u"kind"_s, u"kevolve.report"_s},
        {u"status"_s, status},
        {u"message"_s, u"recorded"_s},
        {u"compile"_s,
         QJsonObject{{u"ok"_s, status != u"compile_error"},
                     {u"log"_s, status == u"compile_error"
                                    ? u"kernel.cu(12): error: identifier \"x\" is undefined"_s
                                    : QString()},
                     {u"kernels"_s, QJsonArray{QJsonObject{{u"name"_s, u"k"_s},
                                                           {u"registers"_s, 234},
                                                           {u"spill_store_bytes"_s, spill},
                                                           {u"spill_load_bytes"_s, spill}}}}}},
    };
    if (status == u"ok" || status == u"incorrect") {
        json.insert(
            u"correctness"_s,
            QJsonObject{{u"ok"_s, status == u"ok"},
                        {u"trials"_s,
                         QJsonArray{QJsonObject{
                             {u"phase"_s, u"pre"_s},
                             {u"shape"_s, QJsonObject{{u"M"_s, 257}, {u"N"_s, 392}, {u"K"_s, 520}}},
                             {u"margin"_s, status == u"ok" ? 0.1 : 40.0},
                             {u"pass"_s, status == u"ok"}}}}});
    }
    if (status == u"ok") {
        json.insert(u"timing"_s,
                    QJsonObject{{u"median_ms"_s, 0.4},
                                {u"reference_median_ms"_s, 0.4 * speedup},
                                {u"speedup_vs_reference"_s, speedup},
                                {u"ci95"_s, QJsonArray{speedup - 0.01, speedup + 0.01}}});
    }
    if (!profile.isEmpty())
        json.insert(u"profile"_s, QJsonObject{{u"candidate"_s, profile}});
    QString error;
    auto r = kev::EvaluationReport::fromJson(json, &error);
    if (!r)
        qFatal("fixture report: %s", qPrintable(error));
    return *r;
}

// The memory-bound test tasks (tests/builtin/tasks), until the library has its own.
kev::Task memoryTask(const QString& name) {
    return task(QStringLiteral(KEV_BUILTIN_TASKS "/") + name + u".json"_s);
}

const QStringList kMemoryTasks{u"softmax_f32_test"_s,
                               u"softmax_f16_test"_s,
                               u"layernorm_bf16_test"_s,
                               u"layernorm_f32_test"_s,
                               u"reduce_max_f32_test"_s,
                               u"reduce_sum_f16_test"_s,
                               u"gemv_f16_test"_s,
                               u"gemv_t_f16_test"_s,
                               u"elementwise_gelu_f16_test"_s,
                               u"elementwise_silu_f32_test"_s};

std::optional<kev::Task> parse(const QString& json, QString* error) {
    return kev::Task::fromJson(QJsonDocument::fromJson(json.toUtf8()).object(), error);
}

QStringList moveParams(const kev::ReviewFeedback& fb) {
    QStringList out;
    const QJsonArray moves = fb.evidence.value(u"moves"_s).toArray();
    for (const QJsonValue& m : moves)
        out << m.toObject().value(u"param"_s).toString();
    return out;
}

} // namespace

class TestBuiltin : public QObject {
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
        QCOMPARE(ids, (QStringList{u"fma_tiled"_s, u"fma_regblock"_s}));
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

    void reviewerIncorrectRevertsToParent() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        kev::AgentContext ctx;
        ctx.task = task(u"gemm_fp16_fp32_4096"_s);
        ctx.device = h200;
        const kev::KernelFamily& mma = family(u"mma_sync"_s);
        const kev::Strategy s = mma.defaultStrategy(ctx.task, h200);
        ctx.parentStrategy = s;
        const kev::ReviewFeedback generated =
            kev::reviewReport(ctx, s, mma.generate(s, ctx.task), report(u"incorrect"_s));
        QCOMPARE(generated.bottleneckId, u"incorrect"_s);
        QVERIFY(generated.evidence.value(u"revert_to_parent"_s).toBool());
        QVERIFY(generated.suggestions.join(u' ').contains(u"revert to the parent"_s));
        QCOMPARE(generated.blame, u"strategy"_s);
        QVERIFY(generated.validate().isEmpty());

        const kev::ReviewFeedback edited =
            kev::reviewReport(ctx, s, u"// a person's kernel"_s, report(u"incorrect"_s));
        QCOMPARE(edited.blame, u"implementation"_s);
    }

    void reviewerRules_data() {
        QTest::addColumn<QString>("status");
        QTest::addColumn<double>("speedup");
        QTest::addColumn<qint64>("spill");
        QTest::addColumn<QJsonObject>("profile");
        QTest::addColumn<QString>("bottleneck");
        QTest::addColumn<QString>("move");

        QTest::newRow("compile error") << u"compile_error"_s << 0.0 << qint64(0) << QJsonObject()
                                       << u"compile_error"_s << QString();
        QTest::newRow("spills") << u"ok"_s << 0.4 << qint64(96) << QJsonObject()
                                << u"register_spills"_s << u"warpN"_s;
        QTest::newRow("near floor")
            << u"ok"_s << 0.98 << qint64(0) << QJsonObject() << u"near_floor"_s << u"raster"_s;
        QTest::newRow("bank conflicts")
            << u"ok"_s << 0.4 << qint64(0)
            << QJsonObject{{u"metrics"_s, QJsonObject{{u"smem_wavefronts_per_request"_s, 4.0}}}}
            << u"smem_bank_conflicts"_s << u"smemLayout"_s;
        QTest::newRow("low occupancy")
            << u"ok"_s << 0.4 << qint64(0)
            << QJsonObject{{u"metrics"_s, QJsonObject{{u"achieved_occupancy"_s, 0.1}}}}
            << u"low_occupancy"_s << u"warpN"_s;
        QTest::newRow("memory bound")
            << u"ok"_s << 0.4 << qint64(0)
            << QJsonObject{{u"metrics"_s, QJsonObject{{u"dram_throughput_pct"_s, 85.0},
                                                      {u"tensor_pipe_pct"_s, 20.0}}}}
            << u"memory_bound"_s << u"blockN"_s;
        QTest::newRow("long scoreboard stall")
            << u"ok"_s << 0.4 << qint64(0)
            << QJsonObject{{u"warp_stalls"_s,
                            QJsonObject{{u"long_scoreboard"_s, 0.5}, {u"barrier"_s, 0.1}}}}
            << u"stall_long_scoreboard"_s << u"stages"_s;
        QTest::newRow("timing only")
            << u"ok"_s << 0.4 << qint64(0) << QJsonObject() << u"timing_only"_s << QString();
    }

    void reviewerRules() {
        QFETCH(QString, status);
        QFETCH(double, speedup);
        QFETCH(qint64, spill);
        QFETCH(QJsonObject, profile);
        QFETCH(QString, bottleneck);
        QFETCH(QString, move);
        kev::AgentContext ctx;
        ctx.task = task(u"gemm_fp16_fp32_4096"_s);
        ctx.device = kev::DeviceInfo::h200();
        const kev::KernelFamily& mma = family(u"mma_sync"_s);
        const kev::Strategy s = mma.defaultStrategy(ctx.task, ctx.device);
        const kev::ReviewFeedback fb = kev::reviewReport(ctx, s, mma.generate(s, ctx.task),
                                                         report(status, speedup, spill, profile));
        QCOMPARE(fb.bottleneckId, bottleneck);
        QVERIFY(fb.validate().isEmpty());
        if (!move.isEmpty())
            QVERIFY2(moveParams(fb).contains(move), qPrintable(moveParams(fb).join(u","_s)));
    }

    void plannerStartsFromTheRooflineFamily() {
        kev::AgentContext ctx;
        ctx.device = kev::DeviceInfo::h200();
        ctx.task = task(u"gemm_fp16_fp32_4096"_s);
        QString error;
        kev::PlannerSearch fp16;
        const auto first = fp16.next(ctx, &error);
        QVERIFY2(first, qPrintable(error));
        QCOMPARE(first->family, u"mma_sync"_s);
        QVERIFY(first->rationale.contains(u"compute-bound"_s));

        ctx.task = task(u"gemm_fp32_fp32_4096"_s);
        kev::PlannerSearch fp32;
        const auto sgemm = fp32.next(ctx, &error);
        QVERIFY2(sgemm, qPrintable(error));
        QCOMPARE(sgemm->family, u"fma_regblock"_s);
    }

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
        const QHash<QString, QString> expected{{u"softmax"_s, u"rowwise"_s},
                                               {u"layernorm"_s, u"rowwise"_s},
                                               {u"reduce"_s, u"rowwise"_s},
                                               {u"gemv"_s, u"gemv"_s},
                                               {u"elementwise"_s, u"elementwise"_s}};
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
            << u"params.pipeline=\"double\": must be none, prefetch or async"_s;
        QTest::newRow("prefetch layernorm f32, no persistent grid")
            << u"layernorm_f32_test"_s << u"rowwise"_s << u"pipeline"_s << QJsonValue(u"prefetch"_s)
            << u"pipeline=prefetch needs a persistent grid to have a next row"_s;
        QTest::newRow("prefetch reduce")
            << u"reduce_max_f32_test"_s << u"rowwise"_s << u"pipeline"_s
            << QJsonValue(u"prefetch"_s)
            << u"pipeline=prefetch: implemented for layernorm and softmax only, not reduce"_s;
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
        QVERIFY(p1Code.contains(u"if (N == CHUNK)\n        layerNormRowsPrefetch<true><<<"_s));
        QVERIFY(
            p1Code.contains(u"else if (N <= CHUNK)\n        layerNormRowsPrefetch<false><<<"_s));
        QVERIFY(p1Code.contains(u"loadWeights<FULL>(W, B, N, t, weights);"_s));
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
        QVERIFY(pfCode.contains(u"if (N == CHUNK)\n        layerNormRowsPrefetch<true><<<"_s));
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
        QVERIFY(twoPass.contains(u"if (N == CHUNK)\n        softmaxRowsPrefetch<true><<<"_s));
        QVERIFY(twoPass.contains(u"else if (N <= CHUNK)\n        softmaxRowsPrefetch<false><<<"_s));
        QVERIFY(twoPass.contains(u"r.v[j] = *reinterpret_cast<const RawX*>(x + col);"_s));
        QVERIFY(twoPass.contains(u"ex2.approx.ftz.f32"_s));
        QVERIFY(twoPass.contains(u"else\n        softmaxRows<<<"_s));
        QVERIFY(twoPass.contains(u"__launch_bounds__(THREADS, CTAS_PER_SM)"_s));
        QVERIFY(twoPass.contains(u"the next row prefetched (packed)"_s));
        QVERIFY(twoPass.contains(u"loadPackedVec(x + col, N - col, ElemX(-INFINITY), r.v[j]);"_s));
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

    void plannerPicksMemoryFamilies() {
        for (const QString& name : kMemoryTasks) {
            kev::AgentContext ctx;
            ctx.device = kev::DeviceInfo::h200();
            ctx.task = memoryTask(name);
            QVERIFY(!kev::knowledge::roofline(ctx.task, ctx.device).computeBound);
            kev::PlannerSearch search;
            QString error;
            const auto first = search.next(ctx, &error);
            QVERIFY2(first, qPrintable(error));
            QVERIFY(kev::knowledge::isMemoryBoundFamily(first->family));
            QVERIFY2(first->rationale.contains(u"memory-bound"_s), qPrintable(first->rationale));
            // The search moves the family's knobs like GEMM's: new, feasible points.
            kev::IterationSummary h;
            h.iteration = 1;
            h.family = first->family;
            h.status = u"ok"_s;
            h.speedup = 0.8;
            ctx.history.append(h);
            ctx.parentStrategy = *first;
            ctx.iteration = 2;
            const auto second = search.next(ctx, &error);
            QVERIFY2(second, qPrintable(error));
            const kev::KernelFamily& f = family(second->family);
            QVERIFY(kev::configurationKey(f, *second) != kev::configurationKey(f, *first));
            QVERIFY(f.constraints(*second, ctx.task, ctx.device).isEmpty());
        }
    }

    void reviewerMemoryRules_data() {
        QTest::addColumn<double>("percentOfFloor");
        QTest::addColumn<qint64>("spill");
        QTest::addColumn<QJsonObject>("profile");
        QTest::addColumn<QString>("bottleneck");
        QTest::addColumn<QString>("move");
        const auto metrics = [](double dram, double occupancy, double longScoreboard) {
            return QJsonObject{
                {u"metrics"_s, QJsonObject{{u"dram_throughput_pct"_s, dram},
                                           {u"achieved_occupancy"_s, occupancy}}},
                {u"warp_stalls"_s,
                 QJsonObject{{u"long_scoreboard"_s, longScoreboard}, {u"barrier"_s, 0.1}}}};
        };
        QTest::newRow("near floor")
            << 91.0 << qint64(0) << QJsonObject() << u"near_floor"_s << u"ctas_per_sm"_s;
        // 86% would be near the floor for GEMM; a memory-bound kernel is pushed on to 90%.
        QTest::newRow("86% is not done")
            << 86.0 << qint64(0) << QJsonObject() << u"timing_only"_s << u"vectors_per_thread"_s;
        QTest::newRow("spills") << 60.0 << qint64(64) << QJsonObject() << u"register_spills"_s
                                << u"vectors_per_thread"_s;
        QTest::newRow("low occupancy")
            << 50.0 << qint64(0) << metrics(45, 0.3, 0.2) << u"few_bytes_in_flight"_s << u"warps"_s;
        QTest::newRow("long scoreboard") << 70.0 << qint64(0) << metrics(60, 0.8, 0.6)
                                         << u"stall_long_scoreboard"_s << u"vectorWidth"_s;
        QTest::newRow("extra traffic")
            << 60.0 << qint64(0) << metrics(85, 0.8, 0.1) << u"extra_traffic"_s << u"stats"_s;
    }

    void reviewerMemoryRules() {
        QFETCH(double, percentOfFloor);
        QFETCH(qint64, spill);
        QFETCH(QJsonObject, profile);
        QFETCH(QString, bottleneck);
        QFETCH(QString, move);
        kev::AgentContext ctx;
        ctx.task = memoryTask(u"softmax_f16_test"_s);
        ctx.device = kev::DeviceInfo::h200();
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        const kev::Strategy s = rowwise.defaultStrategy(ctx.task, ctx.device);
        kev::EvaluationReport r = report(u"ok"_s, 1.05, spill, profile);
        r.percentOfFloor = percentOfFloor;
        const kev::ReviewFeedback fb = kev::reviewReport(ctx, s, rowwise.generate(s, ctx.task), r);
        QCOMPARE(fb.bottleneckId, bottleneck);
        QVERIFY(fb.bottleneckText.contains(u"DRAM floor"_s));
        QVERIFY(fb.validate().isEmpty());
        QVERIFY2(moveParams(fb).contains(move), qPrintable(moveParams(fb).join(u","_s)));
        // Every suggested move names a knob of the family, so the planner can apply it.
        QStringList knobs;
        const auto specs = rowwise.parameters();
        for (const kev::ParameterSpec& spec : specs)
            knobs << spec.name;
        for (const QString& p : moveParams(fb))
            QVERIFY2(knobs.contains(p), qPrintable(p));
    }

    // Reports recorded on the H200 carry the harness's counters under their Nsight Compute names
    // (metrics.candidate, harness/PROTOCOL.md): the reviewer reads them under Kevolve's names.
    void reviewerReadsTheCountersOfRecordedH200Reports() {
        const auto load = [](const QString& name) {
            QFile file(QStringLiteral(KEV_REPORTS "/") + name);
            if (!file.open(QIODevice::ReadOnly))
                qFatal("cannot read %s", qPrintable(file.fileName()));
            QString error;
            const auto report = kev::EvaluationReport::fromJson(
                QJsonDocument::fromJson(file.readAll()).object(), &error);
            if (!report)
                qFatal("%s: %s", qPrintable(name), qPrintable(error));
            return *report;
        };
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();

        // The prefetching softmax kernel: warps at barriers in 33% of their active cycles.
        const kev::EvaluationReport softmax =
            load(u"h200_profiled_softmax_f16_8192__rowwise__prefetch.json"_s);
        const kev::DerivedMetrics m = kev::DerivedMetrics::fromReport(softmax);
        QVERIFY(qAbs(m.candidateStalls.value(u"barrier"_s).toDouble() - 0.326) < 0.001);
        QVERIFY(qAbs(m.candidate.value(u"dram_throughput_pct"_s).toDouble() - 80.43) < 0.01);
        QCOMPARE(m.candidate.value(u"dram_bytes"_s).toDouble(), 134225664.0 + 133578368.0);
        const double occupancy = m.candidate.value(u"achieved_occupancy"_s).toDouble(-1);
        QVERIFY2(occupancy > 0 && occupancy <= 1, qPrintable(QString::number(occupancy)));
        QVERIFY(m.reference.contains(u"dram_throughput_pct"_s));
        QVERIFY(m.candidateCounters.contains(u"gpu__time_duration.sum"_s));
        kev::AgentContext ctx;
        ctx.device = h200;
        ctx.task = task(u"softmax_f16_8192"_s);
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        kev::Strategy s = rowwise.defaultStrategy(ctx.task, h200);
        s.vectorWidth = 8; // the strategy of the recorded step
        s.params.insert(u"vectors_per_thread"_s, 4);
        const kev::ReviewFeedback fb =
            kev::reviewReport(ctx, s, rowwise.generate(s, ctx.task), softmax);
        QCOMPARE(fb.bottleneckId, u"stall_barrier"_s);
        QVERIFY(fb.bottleneckText.contains(u"84.2% of the DRAM floor"_s));
        QVERIFY2(moveParams(fb).contains(u"stats"_s), qPrintable(moveParams(fb).join(u","_s)));

        // A GEMM with 4-way shared-memory bank conflicts: 2.27 wavefronts per instruction.
        const kev::EvaluationReport conflicts =
            load(u"h200_profiled_metrics_smem_conflict4.json"_s);
        const kev::DerivedMetrics c = kev::DerivedMetrics::fromReport(conflicts);
        QVERIFY(qAbs(c.candidate.value(u"smem_wavefronts_per_request"_s).toDouble() - 2.268) <
                0.01);
        QVERIFY(qAbs(c.candidate.value(u"achieved_occupancy"_s).toDouble() - 0.746) < 0.001);
        ctx.task = task(u"gemm_fp16_fp32_nonsquare"_s);
        const kev::KernelFamily& tiled = family(u"fma_tiled"_s);
        const kev::Strategy g = tiled.defaultStrategy(ctx.task, h200);
        const kev::ReviewFeedback gemm =
            kev::reviewReport(ctx, g, tiled.generate(g, ctx.task), conflicts);
        QCOMPARE(gemm.bottleneckId, u"smem_bank_conflicts"_s);
        QVERIFY2(gemm.bottleneckText.contains(u"75% of the shared-memory wavefronts"_s),
                 qPrintable(gemm.bottleneckText));

        // ldmatrix and cp.async: 21 wavefronts per shared ld instruction, yet no conflicts.
        const kev::EvaluationReport mma =
            load(u"h200_profiled_gemm_fp16_fp32_4096__mma_sync.json"_s);
        const kev::DerivedMetrics mm = kev::DerivedMetrics::fromReport(mma);
        QVERIFY(mm.candidate.value(u"smem_wavefronts_per_request"_s).toDouble() > 20);
        QCOMPARE(mm.candidate.value(u"smem_conflict_share"_s).toDouble(-1), 0.0);
        ctx.task = task(u"gemm_fp16_fp32_4096"_s);
        const kev::KernelFamily& mmaSync = family(u"mma_sync"_s);
        const kev::Strategy ms = mmaSync.defaultStrategy(ctx.task, h200);
        const kev::ReviewFeedback mmaReview =
            kev::reviewReport(ctx, ms, mmaSync.generate(ms, ctx.task), mma);
        QVERIFY2(mmaReview.bottleneckId != u"smem_bank_conflicts"_s,
                 qPrintable(mmaReview.bottleneckText));

        // The 16-bit softmax default moves the minimum bytes while DRAM is 78% busy: not extra
        // traffic; its warps wait at barriers most.
        const kev::EvaluationReport atFloor =
            load(u"h200_profiled_softmax_f16_8192__rowwise__default.json"_s);
        ctx.task = task(u"softmax_f16_8192"_s);
        const kev::Strategy d = rowwise.defaultStrategy(ctx.task, h200);
        const kev::ReviewFeedback floorReview =
            kev::reviewReport(ctx, d, rowwise.generate(d, ctx.task), atFloor);
        QCOMPARE(floorReview.bottleneckId, u"stall_barrier"_s);
    }

    void plannerFollowsReviewMovesAndNeverRepeats() {
        kev::AgentContext ctx;
        ctx.device = kev::DeviceInfo::h200();
        ctx.task = task(u"gemm_fp16_fp32_4096"_s);
        kev::PlannerSearch search;
        QString error;
        auto current = search.next(ctx, &error);
        QVERIFY(current);
        QSet<QString> seen;
        double best = 0;
        for (int iteration = 1; iteration <= 25; ++iteration) {
            const kev::KernelFamily& f = family(current->family);
            const QString key = kev::configurationKey(f, *current);
            QVERIFY2(!seen.contains(key), qPrintable(u"re-proposed "_s + key));
            seen.insert(key);
            QVERIFY(!current->rationale.isEmpty());
            QVERIFY(f.constraints(*current, ctx.task, ctx.device).isEmpty());
            // A fake GPU: deeper pipelines are faster, everything else is neutral.
            const double speedup = 0.3 + 0.05 * current->stages;
            kev::IterationSummary h;
            h.iteration = iteration;
            h.family = current->family;
            h.status = u"ok"_s;
            h.speedup = speedup;
            ctx.history.append(h);
            ctx.iteration = iteration + 1;
            if (speedup > best) {
                best = speedup;
                ctx.parentStrategy = *current;
            }
            ctx.lastFeedback.reset();
            if (iteration == 1) {
                kev::ReviewFeedback fb;
                fb.bottleneckId = u"stall_long_scoreboard"_s;
                fb.evidence.insert(u"moves"_s, QJsonArray{QJsonObject{{u"param"_s, u"stages"_s},
                                                                      {u"step"_s, 1},
                                                                      {u"why"_s, u"deeper"_s}}});
                ctx.lastFeedback = fb;
            }
            current = search.next(ctx, &error);
            if (!current)
                break;
            if (iteration == 1) {
                QCOMPARE(current->stages, ctx.parentStrategy->stages + 1);
                QVERIFY(current->rationale.contains(u"stall_long_scoreboard"_s));
            }
        }
        QVERIFY(seen.size() >= 10);
    }
};

QTEST_GUILESS_MAIN(TestBuiltin)
#include "tst_builtin.moc"
