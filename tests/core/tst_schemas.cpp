// Strategy and review documents against their schemas and cross-field rules: the documented
// examples pass, and every kind of bad document is refused with a message naming the field.
#include "jsonschema.h"
#include "reviewfeedback.h"
#include "strategy.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace kev;

namespace {

QJsonObject json(const char* text) {
    return QJsonDocument::fromJson(QByteArray(text)).object();
}

QJsonObject schemaFile(const QString& name) {
    QString error;
    auto schema = JsonSchema::load(QStringLiteral(":/schemas/") + name, &error);
    if (!schema)
        qFatal("%s", qPrintable(error));
    return schema->schema();
}

QJsonObject goodStrategy() {
    return json(
        R"({"family":"mma_sync","block_m":128,"block_n":128,"block_k":32,"warps":8,"warp_m":64,
                    "warp_n":32,"mma":"mma.sync","vector_width":8,"stages":3,"smem_layout":"swizzled",
                    "swizzle_bytes":128,"epilogue":"smem","rationale":"tensor cores"})");
}

} // namespace

class TestSchemas : public QObject {
    Q_OBJECT
private slots:
    void validatorSubset_data() {
        QTest::addColumn<QByteArray>("schema");
        QTest::addColumn<QByteArray>("document");
        QTest::addColumn<QString>("expected");
        const QByteArray object = R"({"type":"object","additionalProperties":false,"required":["a"],
            "properties":{"a":{"type":"integer","minimum":1,"maximum":9},"b":{"enum":["x","y"]},
            "c":{"type":"array","items":{"type":"string","minLength":2},"maxItems":2},
            "d":{"type":["number","null"],"exclusiveMinimum":0},"e":{"type":"string","pattern":"^[a-z]+$"},
            "f":{"$ref":"#/$defs/pos"}},"$defs":{"pos":{"type":"integer","minimum":0}}})";
        QTest::newRow("valid") << object
                               << QByteArray(
                                      R"({"a":3,"b":"x","c":["ab"],"d":null,"e":"ok","f":0})")
                               << QString();
        QTest::newRow("missing") << object << QByteArray(R"({})")
                                 << QStringLiteral("a: required field is missing");
        QTest::newRow("unknown") << object << QByteArray(R"({"a":1,"z":1})")
                                 << QStringLiteral("z: unknown field");
        QTest::newRow("type") << object << QByteArray(R"({"a":1.5})")
                              << QStringLiteral("a: expected integer, got number");
        QTest::newRow("minimum") << object << QByteArray(R"({"a":0})")
                                 << QStringLiteral("a: 0 is less than the minimum 1");
        QTest::newRow("maximum") << object << QByteArray(R"({"a":10})")
                                 << QStringLiteral("a: 10 is more than the maximum 9");
        QTest::newRow("enum") << object << QByteArray(R"({"a":1,"b":"q"})")
                              << QStringLiteral("b: \"q\" is not one of");
        QTest::newRow("items") << object << QByteArray(R"({"a":1,"c":["a"]})")
                               << QStringLiteral("c[0]: shorter than 2");
        QTest::newRow("maxItems") << object << QByteArray(R"({"a":1,"c":["ab","cd","ef"]})")
                                  << QStringLiteral("c: allows at most 2 items");
        QTest::newRow("exclusive") << object << QByteArray(R"({"a":1,"d":0})")
                                   << QStringLiteral("d: 0 must be more than 0");
        QTest::newRow("pattern") << object << QByteArray(R"({"a":1,"e":"A1"})")
                                 << QStringLiteral("e: \"A1\" does not match");
        QTest::newRow("ref") << object << QByteArray(R"({"a":1,"f":-1})")
                             << QStringLiteral("f: -1 is less than the minimum 0");
    }

    void validatorSubset() {
        QFETCH(QByteArray, schema);
        QFETCH(QByteArray, document);
        QFETCH(QString, expected);
        const JsonSchema validator(QJsonDocument::fromJson(schema).object());
        const QStringList errors = validator.validate(QJsonDocument::fromJson(document).object());
        if (expected.isEmpty()) {
            QVERIFY2(errors.isEmpty(), qPrintable(errors.join(u'\n')));
        } else {
            QCOMPARE(errors.size(), 1);
            QVERIFY2(errors.first().startsWith(expected), qPrintable(errors.first()));
        }
    }

    void strategyExamplesAreValid() {
        const QJsonArray examples = schemaFile(QStringLiteral("strategy.schema.json"))
                                        .value(QLatin1String("examples"))
                                        .toArray();
        QVERIFY(examples.size() >= 3);
        for (const auto& example : examples) {
            QString error;
            const auto s = Strategy::fromJson(example.toObject(), &error);
            QVERIFY2(s, qPrintable(error));
            QVERIFY(s->validate().isEmpty());
        }
    }

    void reviewExamplesAreValid() {
        const QJsonArray examples = schemaFile(QStringLiteral("review.schema.json"))
                                        .value(QLatin1String("examples"))
                                        .toArray();
        QVERIFY(examples.size() >= 2);
        for (const auto& example : examples) {
            QString error;
            const auto r = ReviewFeedback::fromJson(example.toObject(), &error);
            QVERIFY2(r, qPrintable(error));
            QCOMPARE(r->toJson(), example.toObject());
        }
    }

    void strategyRoundTrip() {
        QString error;
        const auto s = Strategy::fromJson(goodStrategy(), &error);
        QVERIFY2(s, qPrintable(error));
        QCOMPARE(s->blockM, 128);
        QCOMPARE(s->mma, QStringLiteral("mma.sync"));
        const auto again = Strategy::fromJson(s->toJson(), &error);
        QVERIFY(again);
        QCOMPARE(*again, *s);
    }

    void badStrategies_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown field") << QStringLiteral("tile") << QJsonValue(4)
                                       << QStringLiteral("strategy.tile: unknown field");
        QTest::newRow("zero block")
            << QStringLiteral("block_m") << QJsonValue(0)
            << QStringLiteral("strategy.block_m: 0 is less than the minimum 1");
        QTest::newRow("bad mma") << QStringLiteral("mma") << QJsonValue(QStringLiteral("tensor"))
                                 << QStringLiteral("strategy.mma:");
        QTest::newRow("vector") << QStringLiteral("vector_width") << QJsonValue(3)
                                << QStringLiteral("strategy.vector_width:");
        QTest::newRow("string block")
            << QStringLiteral("block_k") << QJsonValue(QStringLiteral("32"))
            << QStringLiteral("strategy.block_k: expected integer");
        QTest::newRow("empty rationale") << QStringLiteral("rationale") << QJsonValue(QString())
                                         << QStringLiteral("strategy.rationale:");
        QTest::newRow("family vs mma")
            << QStringLiteral("family") << QJsonValue(QStringLiteral("wgmma_tma"))
            << QStringLiteral("strategy.mma: family wgmma_tma");
        QTest::newRow("warp tiles")
            << QStringLiteral("warps") << QJsonValue(4)
            << QStringLiteral("strategy.warps: 4 warps but the warp tiles make 8");
        QTest::newRow("warp divides")
            << QStringLiteral("warp_m") << QJsonValue(48)
            << QStringLiteral("strategy.warp_m: 48 does not divide block_m 128");
        QTest::newRow("swizzle needs bytes")
            << QStringLiteral("swizzle_bytes") << QJsonValue(0)
            << QStringLiteral("strategy.swizzle_bytes: a swizzled layout");
        QTest::newRow("cluster") << QStringLiteral("cluster_m") << QJsonValue(2)
                                 << QStringLiteral(
                                        "strategy.cluster_m/cluster_n: clusters need wgmma_tma");
        QTest::newRow("odd block")
            << QStringLiteral("block_n") << QJsonValue(100)
            << QStringLiteral("strategy.block_n: 100 must be a power of two");
    }

    void badStrategies() {
        QFETCH(QString, field);
        QFETCH(QJsonValue, value);
        QFETCH(QString, expected);
        QJsonObject doc = goodStrategy();
        doc.insert(field, value);
        QString error;
        QVERIFY(!Strategy::fromJson(doc, &error));
        QVERIFY2(error.contains(expected), qPrintable(error));
    }

    void missingRequiredField() {
        QJsonObject doc = goodStrategy();
        doc.remove(QStringLiteral("stages"));
        QString error;
        QVERIFY(!Strategy::fromJson(doc, &error));
        QVERIFY2(error.contains(QStringLiteral("strategy.stages: required field is missing")),
                 qPrintable(error));
    }

    void textFormRoundTrip() {
        QString error;
        auto s = Strategy::fromJson(goodStrategy(), &error);
        QVERIFY(s);
        s->params.insert(QStringLiteral("k_unroll"), 2);
        s->params.insert(QStringLiteral("order"), QJsonArray{1, 2});
        s->rationale = QStringLiteral("line one\n\"quoted\" # not a comment");
        const QString text = s->toText();
        const auto back = Strategy::fromText(text, &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(*back, *s);
        const auto fromJsonText =
            Strategy::fromText(QString::fromUtf8(QJsonDocument(s->toJson()).toJson()), &error);
        QVERIFY2(fromJsonText, qPrintable(error));
        QCOMPARE(*fromJsonText, *s);
    }

    void textFormEditsAndErrors() {
        QString error;
        auto s = Strategy::fromJson(goodStrategy(), &error);
        QVERIFY(s);
        QString text = s->toText();
        text.replace(QStringLiteral("stages: 3"), QStringLiteral("stages: 4   # deeper pipeline"));
        const auto edited = Strategy::fromText(text, &error);
        QVERIFY2(edited, qPrintable(error));
        QCOMPARE(edited->stages, 4);

        QVERIFY(!Strategy::fromText(QStringLiteral("family mma_sync\n"), &error));
        QVERIFY2(error.contains(QStringLiteral("line 1")), qPrintable(error));
        QVERIFY(!Strategy::fromText(
            text.replace(QStringLiteral("stages: 4"), QStringLiteral("stages: 99")), &error));
        QVERIFY2(error.contains(QStringLiteral("strategy.stages: 99 is more than the maximum 16")),
                 qPrintable(error));
    }

    void badReviews_data() {
        QTest::addColumn<QByteArray>("document");
        QTest::addColumn<QString>("expected");
        QTest::newRow("blame")
            << QByteArray(
                   R"({"compile_ok":true,"correct":true,"status":"ok","bottleneck":{"id":"none","text":""},"suggestions":[],"blame":"gpu"})")
            << QStringLiteral("review.blame:");
        QTest::newRow("status")
            << QByteArray(
                   R"({"compile_ok":true,"correct":true,"status":"fine","bottleneck":{"id":"none","text":""},"suggestions":[],"blame":"none"})")
            << QStringLiteral("review.status:");
        QTest::newRow("missing bottleneck")
            << QByteArray(
                   R"({"compile_ok":true,"correct":true,"status":"ok","suggestions":[],"blame":"none"})")
            << QStringLiteral("review.bottleneck: required field is missing");
        QTest::newRow("negative time")
            << QByteArray(
                   R"({"compile_ok":true,"correct":true,"status":"ok","time_ms":-1,"bottleneck":{"id":"none","text":""},"suggestions":[],"blame":"none"})")
            << QStringLiteral("review.time_ms: -1 is less than the minimum 0");
        QTest::newRow("bad id")
            << QByteArray(
                   R"({"compile_ok":true,"correct":true,"status":"ok","bottleneck":{"id":"Memory Bound","text":""},"suggestions":[],"blame":"none"})")
            << QStringLiteral("review.bottleneck.id:");
        QTest::newRow("extra")
            << QByteArray(
                   R"({"compile_ok":true,"correct":true,"status":"ok","bottleneck":{"id":"none","text":""},"suggestions":[],"blame":"none","mood":"good"})")
            << QStringLiteral("review.mood: unknown field");
    }

    void badReviews() {
        QFETCH(QByteArray, document);
        QFETCH(QString, expected);
        QString error;
        QVERIFY(!ReviewFeedback::fromJson(QJsonDocument::fromJson(document).object(), &error));
        QVERIFY2(error.contains(expected), qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(TestSchemas)
#include "tst_schemas.moc"
