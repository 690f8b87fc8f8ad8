// Taking replies apart: one JSON object or one kernel file, wherever the model put it, or a clear
// error; golden tests on recorded replies of each shape (tests/llm/data/replies); and the early
// lint of a candidate file.
#include "llm/replyparser.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QTest>

using namespace Qt::Literals::StringLiterals;
using namespace kev;

namespace {

const QString goodFile = uR"cu(#include <kevolve/abi.h>

// cudaMalloc( is only mentioned here, as is "cublasGemmEx(".
__global__ void k(float* c) {   
    const char* note = "cudaDeviceSynchronize()";
float cube = 1.0f;

c[threadIdx.x] = cube + (note != nullptr);
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    k<<<1, 32, 0, stream>>>(static_cast<float*>(args->outputs[0].data));
    return 0;
}
)cu"_s;

} // namespace

class TestReplyParser : public QObject {
    Q_OBJECT

private slots:
    void jsonAccepted_data();
    void jsonAccepted();
    void jsonRefused_data();
    void jsonRefused();
    void cudaBlockIsExtractedExactly();
    void cudaBlockRefused_data();
    void cudaBlockRefused();
    void recordedReplies_data();
    void recordedReplies();
    void nestedBracesDoNotMakeTheScanQuadratic();
    void lintReadsCodeNotComments();
    void lintFindsWhatTheRefereeRefuses_data();
    void lintFindsWhatTheRefereeRefuses();
};

void TestReplyParser::jsonAccepted_data() {
    QTest::addColumn<QString>("reply");
    QTest::newRow("bare") << u"{\"a\": 1}"_s;
    QTest::newRow("spaces") << u"\n  {\"a\": 1}  \n"_s;
    QTest::newRow("json block") << u"Here it is:\n```json\n{\"a\": 1}\n```\nDone."_s;
    QTest::newRow("plain block") << u"```\n{\"a\": 1}\n```"_s;
    QTest::newRow("think") << u"<think>maybe {\"a\": 2}?</think>\n{\"a\": 1}"_s;
    QTest::newRow("crlf") << u"```json\r\n{\"a\": 1}\r\n```\r\n"_s;
    QTest::newRow("prose around") << u"Sure! The plan: {\"a\": 1} Hope it helps."_s;
    QTest::newRow("lone think") << u"maybe {\"a\": 2}?\n</think>\n{\"a\": 1}"_s;
}

void TestReplyParser::jsonAccepted() {
    QFETCH(QString, reply);
    QString error;
    const auto object = extractJsonObject(reply, &error);
    QVERIFY2(object, qPrintable(error));
    QCOMPARE(*object, (QJsonObject{{u"a"_s, 1}}));
}

void TestReplyParser::jsonRefused_data() {
    QTest::addColumn<QString>("reply");
    QTest::addColumn<QString>("named");
    QTest::newRow("empty") << u"  "_s << u"empty"_s;
    QTest::newRow("prose") << u"I would use 128x128 tiles."_s << u"no ```json block"_s;
    QTest::newRow("two objects") << u"{\"a\": 1} and also {\"b\": 2}"_s << u"2 JSON objects"_s;
    QTest::newRow("truncated") << u"{\"a\": 1, \"b\": "_s << u"not valid JSON"_s;
    QTest::newRow("array") << u"```json\n[1, 2]\n```"_s << u"not an object"_s;
    QTest::newRow("two blocks") << u"```json\n{}\n```\n```json\n{}\n```"_s << u"2 ```json blocks"_s;
    QTest::newRow("unclosed") << u"```json\n{\"a\": 1}\n"_s << u"not closed"_s;
}

void TestReplyParser::jsonRefused() {
    QFETCH(QString, reply);
    QFETCH(QString, named);
    QString error;
    QVERIFY(!extractJsonObject(reply, &error));
    QVERIFY2(error.contains(named), qPrintable(error));
}

void TestReplyParser::cudaBlockIsExtractedExactly() {
    const QString reply = u"Plan: one warp.\n\n```cuda\n"_s + goodFile + u"```\n\nThat is all."_s;
    QString error;
    const auto source = extractCudaBlock(reply, &error);
    QVERIFY2(source, qPrintable(error));
    QCOMPARE(*source, goodFile);
    // Other languages' blocks are not the kernel; a longer fence and upper case still count.
    const auto mixed =
        extractCudaBlock(u"```bash\nnvcc x.cu\n```\n````CUDA\n"_s + goodFile + u"````\n"_s, &error);
    QVERIFY2(mixed, qPrintable(error));
    QCOMPARE(*mixed, goodFile);
}

void TestReplyParser::cudaBlockRefused_data() {
    QTest::addColumn<QString>("reply");
    QTest::addColumn<QString>("named");
    QTest::newRow("none") << u"I would tile by 128."_s << u"no code block"_s;
    QTest::newRow("two") << u"```cuda\na\n```\n```cuda\nb\n```"_s << u"2 code blocks"_s;
    QTest::newRow("unclosed") << u"```cuda\n#include <kevolve/abi.h>\n__global__"_s
                              << u"not closed"_s;
    QTest::newRow("empty") << u"```cuda\n\n```"_s << u"empty"_s;
}

void TestReplyParser::cudaBlockRefused() {
    QFETCH(QString, reply);
    QFETCH(QString, named);
    QString error;
    QVERIFY(!extractCudaBlock(reply, &error));
    QVERIFY2(error.contains(named), qPrintable(error));
}

void TestReplyParser::recordedReplies_data() {
    QTest::addColumn<QString>("base");
    const QDir dir(QStringLiteral(KEV_LLM_TEST_DIR "/data/replies"));
    const QStringList replies = dir.entryList({u"*.reply.txt"_s}, QDir::Files, QDir::Name);
    QVERIFY(replies.size() >= 10);
    for (const QString& name : replies) {
        const QString base = dir.filePath(name.chopped(QStringLiteral(".reply.txt").size()));
        QTest::newRow(qPrintable(name)) << base;
    }
}

void TestReplyParser::recordedReplies() {
    QFETCH(QString, base);
    const auto read = [](const QString& path) {
        QFile file(path);
        return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
    };
    const QString reply = read(base + u".reply.txt"_s);
    QVERIFY(!reply.isEmpty());
    QString error;
    if (QFile::exists(base + u".expected.cu"_s)) {
        const auto source = extractCudaBlock(reply, &error);
        QVERIFY2(source, qPrintable(error));
        QCOMPARE(*source, read(base + u".expected.cu"_s));
        QVERIFY2(lintCandidate(*source).isEmpty(), qPrintable(lintCandidate(*source).join(u'\n')));
    } else if (QFile::exists(base + u".expected.json"_s)) {
        const auto object = extractJsonObject(reply, &error);
        QVERIFY2(object, qPrintable(error));
        QCOMPARE(*object,
                 QJsonDocument::fromJson(read(base + u".expected.json"_s).toUtf8()).object());
    } else {
        const QStringList expected = read(base + u".error.txt"_s).split(u'\n');
        QVERIFY2(expected.size() >= 2,
                 "each reply needs .expected.cu, .expected.json or .error.txt");
        const bool refused = expected.first() == u"json"_s ? !extractJsonObject(reply, &error)
                                                           : !extractCudaBlock(reply, &error);
        QVERIFY(refused);
        QVERIFY2(error.contains(expected.at(1)), qPrintable(error));
    }
}

void TestReplyParser::nestedBracesDoNotMakeTheScanQuadratic() {
    // 100,000 nested, never valid objects: a quadratic scan would take minutes (the test's time
    // limit catches it); the bounded one answers at once.
    const QString hostile = u"Plan: "_s + u"{x"_s.repeated(100'000) + u"}"_s.repeated(100'000);
    QString error;
    QVERIFY(!extractJsonObject(hostile, &error));
    QVERIFY2(error.contains(u"no ```json block"_s), qPrintable(error));
}

void TestReplyParser::lintReadsCodeNotComments() {
    const QStringList problems = lintCandidate(goodFile);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(u"\n"_s)));
}

void TestReplyParser::lintFindsWhatTheRefereeRefuses_data() {
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::addColumn<QString>("named");
    QTest::newRow("malloc") << u"    return 0;"_s
                            << u"    void* p; cudaMalloc(&p, 4);\n    return 0;"_s
                            << u"cudaMalloc is not allowed"_s;
    QTest::newRow("sync") << u"    return 0;"_s
                          << u"    cudaStreamSynchronize(stream);\n    return 0;"_s
                          << u"cudaStreamSynchronize is not allowed"_s;
    QTest::newRow("cublas") << u"    return 0;"_s << u"    cublasGemmEx(0);\n    return 0;"_s
                            << u"cublasGemmEx(: no library calls"_s;
    QTest::newRow("cublas include")
        << u"#include <kevolve/abi.h>"_s << u"#include <kevolve/abi.h>\n#include <cublas_v2.h>"_s
        << u"#include <cublas_v2.h>: no libraries"_s;
    QTest::newRow("thread") << u"    return 0;"_s << u"    std::thread t([] {});\n    return 0;"_s
                            << u"host threads"_s;
    QTest::newRow("no header") << u"#include <kevolve/abi.h>"_s << u"#include <cuda.h>"_s
                               << u"does not #include <kevolve/abi.h>"_s;
    QTest::newRow("no entry") << u"kevolve_launch"_s << u"launch"_s
                              << u"does not define kevolve_launch"_s;
}

void TestReplyParser::lintFindsWhatTheRefereeRefuses() {
    QFETCH(QString, from);
    QFETCH(QString, to);
    QFETCH(QString, named);
    QString source = goodFile;
    QVERIFY(source.contains(from));
    source.replace(from, to);
    const QStringList problems = lintCandidate(source);
    QVERIFY2(problems.join(u"\n"_s).contains(named), qPrintable(problems.join(u"\n"_s)));
}

QTEST_GUILESS_MAIN(TestReplyParser)
#include "tst_replyparser.moc"
