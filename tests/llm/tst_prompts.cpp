// The rendered prompts of the four roles for fixed inputs, compared with golden files (a prompt
// change is a reviewed diff: run with KEVOLVE_UPDATE_GOLDEN=1 to rewrite them), and the template
// rules and context budgeting behind them.
#include "llmfixtures.h"

#include "llm/llmhooks.h"
#include "llm/promptbuilder.h"
#include "llm/promptlibrary.h"

#include <QDir>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::Literals::StringLiterals;
using namespace kev;
using namespace kev::test;

namespace {

QString flatten(const RenderedPrompt& prompt) {
    QString text;
    for (const ChatMessage& message : prompt.messages)
        text += u"=== %1 ===\n%2\n"_s.arg(message.role, message.content);
    return text;
}

PromptBuilder builtinBuilder(qint64 budget = 100'000) {
    return PromptBuilder(PromptLibrary(QStringList{}), budget);
}

std::optional<RenderedPrompt> renderRole(const PromptBuilder& builder, const QString& role,
                                         const AgentContext& context, QString* error) {
    if (role == u"planner"_s)
        return builder.planner(context, error);
    if (role == u"coder"_s)
        return builder.coder(context, fixedStrategy(), error);
    if (role == u"compile_fix"_s)
        return builder.compileFix(context, fixedStrategy(),
                                  readText(testDir() + u"/data/kernel_v7.cu"_s),
                                  readText(testDir() + u"/data/compile_error.log"_s), error);
    return builder.reviewer(context, fixedStrategy(), readText(testDir() + u"/data/kernel_v7.cu"_s),
                            fixedReport(), error);
}

Task customTask() {
    QString error;
    const auto task = TaskLibrary::loadFile(
        QStringLiteral(KEV_SOURCE_DIR) + u"/resources/examples/custom_op/task.json"_s, &error);
    if (!task)
        qFatal("%s", qPrintable(error));
    return *task;
}

// The custom example with its reference replaced by `source` (or by no file when it is null).
Task customTaskWithReference(const QTemporaryDir& dir, const QByteArray& source) {
    Task task = customTask();
    task.referenceFile = dir.filePath(u"ref.cu"_s);
    if (!source.isNull()) {
        QFile file(task.referenceFile);
        if (!file.open(QIODevice::WriteOnly))
            qFatal("cannot write %s", qPrintable(task.referenceFile));
        file.write(source);
    }
    return task;
}

QString systemPrompt(const Task& task, const QString& role = u"coder"_s) {
    AgentContext context = fixedContext();
    context.task = task;
    context.parentSource.clear();
    QString error;
    const auto prompt = renderRole(builtinBuilder(), role, context, &error);
    if (!prompt)
        qFatal("%s", qPrintable(error));
    return prompt->messages[0].content + u"\n"_s + prompt->messages[1].content;
}

} // namespace

class TestPrompts : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void golden_data();
    void golden();
    void promptsStateTheRequirements();
    void everyBuiltinTemplateIsWellFormed();
    void unknownPlaceholderIsNamed();
    void malformedPlaceholdersAreNamed();
    void valuesAreInsertedVerbatim();
    void userFolderOverridesATemplate();
    void missingTemplateIsNamed();
    void historyIsSummarisedToFit();
    void essentialsAreNeverCut();
    void longCompileLogIsShortenedInTheMiddle();
    void defaultKnowledgeListsTheBuiltinFamilies();
    void beamAlternativeIsAskedForSomethingDifferent();
    void customTaskStatesItsArguments();
    void customReferenceIsQuoted();
    void missingReferenceIsANote();
    void hugeReferenceIsCutWithANote();
    void registryOpsStateTheirConvention_data();
    void registryOpsStateTheirConvention();
};

void TestPrompts::initTestCase() {
    setPlannerKnowledgeProvider([](const Task& task, const DeviceInfo& device) {
        return u"(fixed knowledge for %1 on %2)"_s.arg(task.name, device.name);
    });
}

void TestPrompts::cleanupTestCase() {
    setPlannerKnowledgeProvider({});
}

void TestPrompts::golden_data() {
    QTest::addColumn<QString>("role");
    for (const auto& role : {u"planner"_s, u"coder"_s, u"compile_fix"_s, u"reviewer"_s})
        QTest::newRow(qPrintable(role)) << role;
}

void TestPrompts::golden() {
    QFETCH(QString, role);
    QString error;
    const auto prompt = renderRole(builtinBuilder(), role, fixedContext(), &error);
    QVERIFY2(prompt, qPrintable(error));
    QVERIFY(prompt->trimmed.isEmpty());
    const QString rendered = flatten(*prompt);
    const QString path = testDir() + u"/golden/%1.txt"_s.arg(role);
    if (QProcessEnvironment::systemEnvironment().value(u"KEVOLVE_UPDATE_GOLDEN"_s) == u"1"_s) {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(rendered.toUtf8());
        QSKIP("golden file rewritten");
    }
    const QString golden = readText(path);
    if (rendered != golden) {
        const QStringList a = rendered.split(u'\n');
        const QStringList b = golden.split(u'\n');
        for (qsizetype i = 0; i < std::max(a.size(), b.size()); ++i) {
            if (a.value(i) != b.value(i))
                QFAIL(qPrintable(u"%1 differs from the rendered prompt at line %2:\n  golden:   "
                                 u"%3\n  rendered: %4\n(KEVOLVE_UPDATE_GOLDEN=1 rewrites it)"_s.arg(
                                     path, QString::number(i + 1), b.value(i), a.value(i))));
        }
    }
}

void TestPrompts::promptsStateTheRequirements() {
    QString error;
    const AgentContext context = fixedContext();
    const auto coder = renderRole(builtinBuilder(), u"coder"_s, context, &error);
    QVERIFY2(coder, qPrintable(error));
    const QString system = coder->messages[0].content;
    const QString user = coder->messages[1].content;
    // The task's exact requirements.
    for (const auto& needle :
         {u"M = 4096, N = 4096, K = 4096"_s, u"M=1000 N=1064 K=904"_s,
          u"A fp16 (IEEE half, __half)"_s, u"C fp32 (float)"_s, u"accumulate in fp32 (float)"_s,
          u"A is row-major M x K"_s, u"multiple of 8 elements"_s, u"cuBLAS (cublasGemmEx"_s,
          u"NVIDIA H200"_s, u"sm_90a"_s})
        QVERIFY2(system.contains(needle), qPrintable(needle));
    // The ABI, verbatim.
    QVERIFY(system.contains(PromptLibrary::abiText().trimmed()));
    QVERIFY(system.contains(u"typedef struct KevolveArgs {"_s));
    // What the referee checks, and what is not allowed.
    for (const auto& needle : {u"no cuBLAS"_s, u"no host threads"_s, u"poisoned with NaN"_s,
                               u"ABBA"_s, u"suspicious"_s, u"must not allocate"_s})
        QVERIFY2(system.contains(needle), qPrintable(needle));
    // The coder gets the strategy, the best code and the feedback, and the reply format.
    QVERIFY(user.contains(u"\"family\": \"mma_sync\""_s));
    QVERIFY(user.contains(u"gemm_mma_sync_128x128x32<<<grid, 256, 0, stream>>>"_s));
    QVERIFY(user.contains(u"\"smem_bank_conflicts\""_s));
    QVERIFY(user.contains(u"exactly one fenced block that starts with ```cuda"_s));
    QVERIFY(user.contains(u"Try a 128x256 block tile next."_s));

    const auto planner = renderRole(builtinBuilder(), u"planner"_s, context, &error);
    QVERIFY2(planner, qPrintable(error));
    const QString plan = planner->messages[1].content;
    QVERIFY(plan.contains(u"\"required\": ["_s));
    QVERIFY(plan.contains(u"v3 (from v1) | mma_sync 128x128x32 w8 s3 | ok | 0.71x"_s));
    QVERIFY(plan.contains(u"1. v3: mma_sync 128x128x32 w8 s3 at 0.71x"_s));
    QVERIFY(plan.contains(u"(fixed knowledge for gemm_fp16_fp32_4096 on NVIDIA H200)"_s));
    QVERIFY(plan.contains(u"speedup 0.71 (95% CI 0.705 to 0.716)"_s));

    const auto reviewer = renderRole(builtinBuilder(), u"reviewer"_s, context, &error);
    QVERIFY2(reviewer, qPrintable(error));
    const QString review = reviewer->messages[1].content;
    for (const auto& needle : {u"roofline: floor 0.139 ms, 49.5% of the floor, compute-bound"_s,
                               u"\"smem_bank_conflicts_per_request\":3.9"_s, u"168 registers"_s,
                               u"2 of 2 trials passed"_s, u"\"blame\": {"_s})
        QVERIFY2(review.contains(needle), qPrintable(needle));
}

void TestPrompts::everyBuiltinTemplateIsWellFormed() {
    const QStringList names = PromptLibrary::builtinNames();
    for (const auto& name : {u"system"_s, u"planner"_s, u"coder"_s, u"compile_fix"_s, u"reviewer"_s,
                             u"reask"_s, u"review_hints"_s})
        QVERIFY2(names.contains(name), qPrintable(name));
    for (const QString& name : names) {
        QString error;
        const auto prompt = PromptLibrary(QStringList{}).load(name, &error);
        QVERIFY2(prompt, qPrintable(error));
        prompt->placeholders(&error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }
}

void TestPrompts::unknownPlaceholderIsNamed() {
    const PromptTemplate prompt(u"t"_s, u"line one\nM = {{task.m}}, Q = {{ task.q }}"_s);
    QString error;
    QVERIFY(!prompt.render({{u"task.m"_s, u"4096"_s}}, &error));
    QCOMPARE(error, u"prompt template t line 2: unknown placeholder {{task.q}}"_s);
    QCOMPARE(prompt.placeholders(), (QStringList{u"task.m"_s, u"task.q"_s}));
}

void TestPrompts::malformedPlaceholdersAreNamed() {
    QString error;
    QVERIFY(!PromptTemplate(u"t"_s, u"a {{task.m b"_s).render({}, &error));
    QVERIFY2(error.contains(u"line 1: \"{{\" is not closed"_s), qPrintable(error));
    QVERIFY(!PromptTemplate(u"t"_s, u"\n{{Task M}}"_s).render({}, &error));
    QVERIFY2(error.contains(u"line 2: \"Task M\" is not a placeholder name"_s), qPrintable(error));
}

void TestPrompts::valuesAreInsertedVerbatim() {
    QString error;
    const auto text = PromptTemplate(u"t"_s, u"<{{a}}|{{b}}>"_s)
                          .render({{u"a"_s, u"{{b}}"_s}, {u"b"_s, u"x{y}"_s}}, &error);
    QVERIFY2(text, qPrintable(error));
    QCOMPARE(*text, u"<{{b}}|x{y}>"_s);
}

void TestPrompts::userFolderOverridesATemplate() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile file(dir.filePath(u"reask.txt"_s));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("Wrong: {{error}}. Send {{expected}}.");
    file.close();
    const PromptBuilder builder(PromptLibrary({dir.path()}), 10'000);
    QString error;
    QCOMPARE(builder.reask(u"no JSON"_s, u"JSON"_s, &error),
             std::optional<QString>(u"Wrong: no JSON. Send JSON."_s));
    const auto loaded = PromptLibrary({dir.path()}).load(u"reask"_s, &error);
    QVERIFY(loaded);
    QCOMPARE(loaded->origin(), dir.filePath(u"reask.txt"_s));
    // Templates the folder does not have still come from the embedded set.
    const auto planner = PromptLibrary({dir.path()}).load(u"planner"_s, &error);
    QVERIFY(planner);
    QCOMPARE(planner->origin(), u":/prompts/planner.txt"_s);
}

void TestPrompts::missingTemplateIsNamed() {
    QString error;
    QVERIFY(!PromptLibrary({u"/nonexistent/prompts"_s}).load(u"nosuch"_s, &error));
    QVERIFY2(error.contains(u"no prompt template named 'nosuch'"_s), qPrintable(error));
    QVERIFY(error.contains(u"/nonexistent/prompts"_s));
}

void TestPrompts::historyIsSummarisedToFit() {
    AgentContext context = fixedContext();
    for (int v = 4; v <= 300; ++v)
        context.history << summary(v, v - 1, u"mma_sync 128x128x32 w8 s3"_s, u"ok"_s,
                                   0.5 + v / 1000.0);
    QString error;
    const auto full = builtinBuilder(1'000'000).planner(context, &error);
    QVERIFY2(full, qPrintable(error));
    const qint64 budget = full->estimatedTokens / 2;
    const auto fitted = builtinBuilder(budget).planner(context, &error);
    QVERIFY2(fitted, qPrintable(error));
    QVERIFY(fitted->estimatedTokens <= budget);
    QVERIFY(fitted->trimmed.contains(u"history"_s));
    const QString user = fitted->messages[1].content;
    QVERIFY2(user.contains(u"v1 to v"_s) && user.contains(u"steps, summarised)"_s),
             qPrintable(user.left(4000)));
    QVERIFY(user.contains(u"; best 0.7"_s));
    // The newest step is always shown in full.
    QVERIFY(user.contains(u"v300 (from v299)"_s));
}

void TestPrompts::essentialsAreNeverCut() {
    AgentContext context = fixedContext();
    for (int v = 4; v <= 300; ++v)
        context.history << summary(v, v - 1, u"mma_sync 128x128x32 w8 s3"_s, u"ok"_s, 0.6);
    QString error;
    // Smallest budget at which the planner still fits: everything flexible is gone, the parent
    // strategy, the feedback and the note are all there.
    const auto minimal = builtinBuilder(1'000'000).planner(context, &error);
    QVERIFY(minimal);
    qint64 budget = minimal->estimatedTokens;
    std::optional<RenderedPrompt> last;
    for (; budget > 0; budget -= 200) {
        auto prompt = builtinBuilder(budget).planner(context, &error);
        if (!prompt)
            break;
        last = prompt;
    }
    QVERIFY(last);
    const QString user = last->messages[1].content;
    QVERIFY(user.contains(u"\"family\": \"mma_sync\""_s));
    QVERIFY(user.contains(u"\"smem_bank_conflicts\""_s));
    QVERIFY(user.contains(u"Try a 128x256 block tile next."_s));
    QVERIFY(last->messages[0].content.contains(u"M = 4096, N = 4096, K = 4096"_s));
    QVERIFY2(error.contains(u"raise context_tokens"_s), qPrintable(error));

    // The coder never loses the best code: a budget below it is an error, not a cut.
    const auto coder = builtinBuilder(3000).coder(context, fixedStrategy(), &error);
    QVERIFY(!coder);
    QVERIFY2(error.contains(u"the coder prompt needs about"_s), qPrintable(error));
}

void TestPrompts::longCompileLogIsShortenedInTheMiddle() {
    QString log;
    for (int i = 0; i < 3000; ++i)
        log += u"kernel.cu(%1): error: something is wrong here\n"_s.arg(i);
    QString error;
    const auto prompt = builtinBuilder(12'000).compileFix(
        fixedContext(), fixedStrategy(), readText(testDir() + u"/data/kernel_v7.cu"_s), log,
        &error);
    QVERIFY2(prompt, qPrintable(error));
    const QString user = prompt->messages[1].content;
    QVERIFY(user.contains(u"kernel.cu(0): error"_s));
    QVERIFY(user.contains(u"kernel.cu(2999): error"_s));
    QVERIFY(user.contains(u"characters left out"_s));
    QVERIFY(prompt->trimmed.contains(u"compiler output"_s));
}

void TestPrompts::defaultKnowledgeListsTheBuiltinFamilies() {
    setPlannerKnowledgeProvider({});
    const QString knowledge = plannerKnowledge(fixedTask(), DeviceInfo::h200());
    setPlannerKnowledgeProvider([](const Task& task, const DeviceInfo& device) {
        return u"(fixed knowledge for %1 on %2)"_s.arg(task.name, device.name);
    });
    QVERIFY2(knowledge.contains(u"- mma_sync: "_s), qPrintable(knowledge));
    // Knobs are named as the strategy JSON names them.
    QVERIFY2(knowledge.contains(u"knobs: block_m {"_s), qPrintable(knowledge));
    QVERIFY(!knowledge.contains(u"blockM"_s));
    QVERIFY(knowledge.contains(u"a feasible start: mma_sync "_s));
}

void TestPrompts::beamAlternativeIsAskedForSomethingDifferent() {
    AgentContext context = fixedContext();
    context.beamWidth = 3;
    context.beamIndex = 2;
    QString error;
    const auto prompt = builtinBuilder().planner(context, &error);
    QVERIFY2(prompt, qPrintable(error));
    QVERIFY(prompt->messages[1].content.contains(
        u"explores 3 strategies in parallel and you write number 3"_s));
}

void TestPrompts::customTaskStatesItsArguments() {
    const Task task = customTask();
    for (const auto& role : {u"planner"_s, u"coder"_s, u"compile_fix"_s, u"reviewer"_s}) {
        const QString text = systemPrompt(task, role);
        QVERIFY2(text.contains(u"- Operation: a custom op"_s), qPrintable(role));
        QVERIFY2(!text.contains(u"M = 0, N = 0"_s), qPrintable(role));
        QVERIFY2(!text.contains(u"KEVOLVE_GEMM_M/N/K"_s) || role != u"coder"_s, qPrintable(text));
    }
    const QString text = systemPrompt(task);
    const QStringList needles = {
        // The dimensions in args order, with their sizes on every shape.
        u"- Dimensions, in the order of args->dims: args->dims[0] = M, args->dims[1] = N"_s,
        u"- Timed shape: M = 8192, N = 4096"_s,
        u"M = 257, N = 1000; M = 1, N = 4096; M = 33, N = 3080; M = 3, N = 8"_s,
        // Each tensor: its place in args, shape, dtype, strides, distribution.
        u"args->inputs[0] = X, input: shape [M, N] (rank 2), fp16 (IEEE half, __half), stride "
        u"{ld, 1} with ld = N rounded up to a multiple of 8 ({4096, 1} at the timed shape); drawn "
        u"from normal, N(0,1)"_s,
        u"args->inputs[1] = W, input: shape [N] (rank 1), fp16 (IEEE half, __half), stride {1} "
        u"({1} at the timed shape); drawn from positive, U(0.5,2)"_s,
        u"args->outputs[0] = Y, output: shape [M, N] (rank 2), fp16 (IEEE half, __half), stride "
        u"{ld, 1}"_s,
        // The scalars in order with their values, the tolerance and the counts.
        u"- Scalars, in the order of args->scalars: args->scalars[0]: epsilon = 1e-06"_s,
        u"atol = 0.002, rtol = 0.004"_s,
        u"|y - ref| <= 0.002 + 0.004 * |ref|"_s,
        u"134217728 FLOP, 134225920 bytes"_s,
        // The coder's requirements name the same mapping.
        u"M = dims[0], N = dims[1]"_s,
        u"X = inputs[0], W = inputs[1], Y = outputs[0]"_s,
        u"epsilon = scalars[0]"_s,
        u"more than 10% faster than the reference is flagged suspicious"_s,
    };
    for (const QString& needle : needles)
        QVERIFY2(text.contains(needle), qPrintable(needle + u"\n---\n"_s + text.left(6000)));
    QVERIFY(text.indexOf(u"args->inputs[0] = X"_s) < text.indexOf(u"args->inputs[1] = W"_s));
    QVERIFY(text.indexOf(u"args->inputs[1] = W"_s) < text.indexOf(u"args->outputs[0] = Y"_s));
    QVERIFY(!text.contains(u"task.op"_s));
    QVERIFY(systemPrompt(task, u"planner"_s).contains(u"This op is not a GEMM"_s));
}

void TestPrompts::customReferenceIsQuoted() {
    const Task task = customTask();
    const QString reference = readText(task.referenceFile);
    const QString text = systemPrompt(task);
    QVERIFY2(text.contains(u"- Reference source ("_s + task.referenceFile), qPrintable(text));
    QVERIFY(text.contains(u"```cuda\n"_s + reference.trimmed() + u"\n```"_s));
    const QString line = reference.split(u'\n').filter(u"kevolve_launch"_s).value(0);
    QVERIFY(!line.isEmpty());
    QVERIFY(text.contains(line));
}

void TestPrompts::missingReferenceIsANote() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Task task = customTaskWithReference(dir, QByteArray());
    const QString text = systemPrompt(task);
    QVERIFY2(text.contains(u"- Reference source: (could not be read from "_s + task.referenceFile),
             qPrintable(text.left(6000)));
    QVERIFY(text.contains(u"args->inputs[0] = X"_s));

    const Task empty = customTaskWithReference(dir, QByteArray(""));
    QVERIFY(systemPrompt(empty).contains(u"(the file %1 is empty)"_s.arg(empty.referenceFile)));
}

void TestPrompts::hugeReferenceIsCutWithANote() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QByteArray source = "// first line of the reference\n";
    while (source.size() < 200'000)
        source += "__device__ float pad_function_with_a_long_name(float x) { return x; }\n";
    source += "// last line of the reference\n";
    const Task task = customTaskWithReference(dir, source);
    const QString text = systemPrompt(task);
    QVERIFY(text.contains(u"first line of the reference"_s));
    QVERIFY(text.contains(u"last line of the reference"_s));
    QVERIFY(text.contains(u"characters left out"_s));
    QVERIFY2(text.contains(u"the file has %1 characters, of which 24000 are shown"_s.arg(
                 QString::fromUtf8(source).trimmed().size())),
             qPrintable(text.left(4000)));
    QVERIFY(text.size() < 100'000);
}

void TestPrompts::registryOpsStateTheirConvention_data() {
    QTest::addColumn<QString>("task");
    QTest::addColumn<QStringList>("needles");
    QTest::newRow("gemv") << u"gemv_f16_16384"_s
                          << QStringList{u"y = A x"_s,
                                         u"args->inputs[0] = A, input: shape [M, N]"_s,
                                         u"args->inputs[1] = x, input: shape [N]"_s,
                                         u"args->outputs[0] = y, output: shape [M]"_s,
                                         u"args->scalars[0]: transpose = 0 (false)"_s,
                                         u"cuBLAS (GEMV"_s};
    QTest::newRow("gemv transposed")
        << u"gemv_f16_16384_transposed"_s
        << QStringList{u"y = A^T x"_s, u"args->inputs[1] = x, input: shape [M]"_s,
                       u"args->outputs[0] = y, output: shape [N]"_s,
                       u"args->scalars[0]: transpose = 1 (true)"_s};
    QTest::newRow("softmax") << u"softmax_f16_8192"_s
                             << QStringList{u"softmax(X[i, :])"_s,
                                            u"args->inputs[0] = X, input: shape [M, N]"_s,
                                            u"args->outputs[0] = Y, output: shape [M, N]"_s,
                                            u"none (args->scalars is unused)"_s,
                                            u"+-1e4"_s,
                                            u"110% of the DRAM floor"_s,
                                            u"straightforward, untuned CUDA kernel"_s};
    QTest::newRow("layernorm") << u"layernorm_bf16_16384x4096"_s
                               << QStringList{u"sqrt(var_i + epsilon)"_s,
                                              u"args->inputs[1] = W, input: shape [N]"_s,
                                              u"args->inputs[2] = B, input: shape [N]"_s,
                                              u"bf16 (__nv_bfloat16)"_s,
                                              u"args->scalars[0]: epsilon = "_s,
                                              u"W = inputs[1], B = inputs[2], Y = outputs[0]"_s,
                                              u"one-pass"_s};
    QTest::newRow("rmsnorm") << u"rmsnorm_bf16_16384x4096"_s
                             << QStringList{u"sqrt(mean_i + epsilon) * W[j]"_s,
                                            u"args->inputs[1] = W, input: shape [N]"_s,
                                            u"args->outputs[0] = Y, output: shape [M, N]"_s,
                                            u"bf16 (__nv_bfloat16)"_s,
                                            u"args->scalars[0]: epsilon = "_s,
                                            u"huge offset"_s,
                                            u"110% of the DRAM floor"_s};
    QTest::newRow("reduce max") << u"reduce_max_f32_16384x8192"_s
                                << QStringList{u"max over j of X[i, j]"_s,
                                               u"args->outputs[0] = Y, output: shape [M]"_s,
                                               u"args->scalars[0]: reduction = 1 (max)"_s,
                                               u"started at 0"_s};
    QTest::newRow("reduce sum") << u"reduce_sum_f32_16384x8192"_s
                                << QStringList{u"sum over j of X[i, j]"_s,
                                               u"args->scalars[0]: reduction = 0 (sum)"_s};
    QTest::newRow("elementwise") << u"elementwise_gelu_f16_64M"_s
                                 << QStringList{u"erfc(-X / sqrt(2))"_s, u"args->dims[0] = N"_s,
                                                u"args->inputs[0] = X, input: shape [N]"_s,
                                                u"args->scalars[0]: function = 0 (GELU)"_s,
                                                u"N = dims[0]"_s};
}

void TestPrompts::registryOpsStateTheirConvention() {
    QFETCH(QString, task);
    QFETCH(QStringList, needles);
    QString error;
    const auto resolved = TaskLibrary().resolve(task, &error);
    QVERIFY2(resolved, qPrintable(error));
    const QString text = systemPrompt(*resolved);
    for (const QString& needle : needles)
        QVERIFY2(text.contains(needle), qPrintable(needle + u"\n---\n"_s + text.left(5000)));
    QVERIFY(text.contains(u"- Timed shape: "_s));
    QVERIFY(!text.contains(u"cublasGemmEx"_s));
    QVERIFY(!text.contains(u"KEVOLVE_GEMM_M/N/K"_s));
    QVERIFY(!text.contains(u"K = 0"_s));
    // The planner is not asked for GEMM tile arithmetic.
    const QString plan = systemPrompt(*resolved, u"planner"_s);
    QVERIFY(plan.contains(u"This op is not a GEMM"_s));
    QVERIFY(!plan.contains(u"block_k x block_n"_s));
}

QTEST_GUILESS_MAIN(TestPrompts)
#include "tst_prompts.moc"
