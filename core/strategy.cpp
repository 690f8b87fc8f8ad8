#include "strategy.h"

#include "jsonschema.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace kev {

namespace {

const JsonSchema& strategySchema() {
    static const JsonSchema schema = [] {
        QString error;
        auto loaded = JsonSchema::load(QStringLiteral(":/schemas/strategy.schema.json"), &error);
        Q_ASSERT_X(loaded, "strategySchema", "the embedded strategy schema is missing");
        return loaded ? *loaded : JsonSchema();
    }();
    return schema;
}

bool isPowerOfTwo(int v) {
    return v > 0 && (v & (v - 1)) == 0;
}

QString quoted(const QString& s) {
    const QByteArray json = QJsonDocument(QJsonArray{s}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(json.mid(1, json.size() - 2));
}

QString yamlValue(const QJsonValue& value) {
    switch (value.type()) {
    case QJsonValue::String:
        return quoted(value.toString());
    case QJsonValue::Double:
        return QString::number(value.toDouble(), 'g', 15);
    case QJsonValue::Bool:
        return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Array:
        return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
    case QJsonValue::Object:
        return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        break;
    }
    return QStringLiteral("null");
}

std::optional<QJsonValue> parseScalar(const QString& raw, QString* error) {
    const QString text = raw.trimmed();
    if (text.isEmpty() || text == QLatin1String("null") || text == QLatin1String("~"))
        return QJsonValue();
    if (text == QLatin1String("true"))
        return QJsonValue(true);
    if (text == QLatin1String("false"))
        return QJsonValue(false);
    if (text.startsWith(u'"') || text.startsWith(u'[') || text.startsWith(u'{')) {
        // JSON parses only containers, so wrap the value in an array.
        QJsonParseError parseError;
        const QJsonDocument doc = QJsonDocument::fromJson(
            (QStringLiteral("[") + text + QStringLiteral("]")).toUtf8(), &parseError);
        if (parseError.error != QJsonParseError::NoError || doc.array().size() != 1) {
            *error = QStringLiteral("cannot read the value ") + text;
            return std::nullopt;
        }
        return doc.array().at(0);
    }
    if (text.startsWith(u'\'') && text.endsWith(u'\'') && text.size() >= 2)
        return QJsonValue(
            text.mid(1, text.size() - 2).replace(QStringLiteral("''"), QStringLiteral("'")));
    bool ok = false;
    const double d = text.toDouble(&ok);
    if (ok)
        return QJsonValue(d);
    return QJsonValue(text);
}

// "key: value  # comment" outside quotes.
QString stripComment(const QString& line) {
    bool inDouble = false;
    bool inSingle = false;
    for (qsizetype i = 0; i < line.size(); ++i) {
        const QChar c = line.at(i);
        if (c == u'\\' && inDouble) {
            ++i;
            continue;
        }
        if (c == u'"' && !inSingle)
            inDouble = !inDouble;
        else if (c == u'\'' && !inDouble)
            inSingle = !inSingle;
        else if (c == u'#' && !inDouble && !inSingle && (i == 0 || line.at(i - 1).isSpace()))
            return line.left(i);
    }
    return line;
}

std::optional<QJsonObject> parseYamlSubset(const QString& text, QString* error) {
    QJsonObject root;
    QString nestedKey;
    QJsonObject nested;
    const auto flush = [&] {
        if (!nestedKey.isEmpty())
            root.insert(nestedKey, nested);
        nestedKey.clear();
        nested = {};
    };
    const QStringList lines = text.split(u'\n');
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString line = stripComment(lines.at(i));
        if (line.trimmed().isEmpty() || line.trimmed() == QLatin1String("---"))
            continue;
        const bool indented = line.at(0).isSpace();
        const qsizetype colon = line.indexOf(u':');
        const QString where =
            QStringLiteral("line ") + QString::number(i + 1) + QStringLiteral(": ");
        if (colon < 0) {
            *error = where + QStringLiteral("expected \"key: value\"");
            return std::nullopt;
        }
        const QString key = line.left(colon).trimmed();
        const QString rest = line.mid(colon + 1);
        if (key.isEmpty()) {
            *error = where + QStringLiteral("empty key");
            return std::nullopt;
        }
        if (indented) {
            if (nestedKey.isEmpty()) {
                *error = where + QStringLiteral("indented entry without a parent key");
                return std::nullopt;
            }
            QString valueError;
            const auto value = parseScalar(rest, &valueError);
            if (!value) {
                *error = where + valueError;
                return std::nullopt;
            }
            nested.insert(key, *value);
            continue;
        }
        flush();
        if (rest.trimmed().isEmpty()) {
            nestedKey = key;
            continue;
        }
        QString valueError;
        const auto value = parseScalar(rest, &valueError);
        if (!value) {
            *error = where + valueError;
            return std::nullopt;
        }
        root.insert(key, *value);
    }
    flush();
    return root;
}

} // namespace

QJsonObject Strategy::toJson() const {
    return {
        {QStringLiteral("family"), family},
        {QStringLiteral("block_m"), blockM},
        {QStringLiteral("block_n"), blockN},
        {QStringLiteral("block_k"), blockK},
        {QStringLiteral("warps"), warps},
        {QStringLiteral("warp_m"), warpM},
        {QStringLiteral("warp_n"), warpN},
        {QStringLiteral("mma"), mma},
        {QStringLiteral("vector_width"), vectorWidth},
        {QStringLiteral("stages"), stages},
        {QStringLiteral("smem_layout"), smemLayout},
        {QStringLiteral("smem_padding_bytes"), smemPaddingBytes},
        {QStringLiteral("swizzle_bytes"), swizzleBytes},
        {QStringLiteral("split_k"), splitK},
        {QStringLiteral("cluster_m"), clusterM},
        {QStringLiteral("cluster_n"), clusterN},
        {QStringLiteral("consumer_warpgroups"), consumerWarpgroups},
        {QStringLiteral("raster"), raster},
        {QStringLiteral("group_size"), groupSize},
        {QStringLiteral("epilogue"), epilogue},
        {QStringLiteral("params"), params},
        {QStringLiteral("rationale"), rationale},
    };
}

std::optional<Strategy> Strategy::fromJson(const QJsonObject& json, QString* error) {
    const QStringList schemaErrors = strategySchema().validate(json, QStringLiteral("strategy"));
    if (!schemaErrors.isEmpty()) {
        if (error)
            *error = schemaErrors.join(u'\n');
        return std::nullopt;
    }
    Strategy s;
    const auto integer = [&json](const char* key, int fallback) {
        return json.value(QLatin1String(key)).toInt(fallback);
    };
    s.family = json.value(QLatin1String("family")).toString();
    s.blockM = integer("block_m", s.blockM);
    s.blockN = integer("block_n", s.blockN);
    s.blockK = integer("block_k", s.blockK);
    s.warps = integer("warps", s.warps);
    s.warpM = integer("warp_m", s.warpM);
    s.warpN = integer("warp_n", s.warpN);
    s.mma = json.value(QLatin1String("mma")).toString(s.mma);
    s.vectorWidth = integer("vector_width", s.vectorWidth);
    s.stages = integer("stages", s.stages);
    s.smemLayout = json.value(QLatin1String("smem_layout")).toString(s.smemLayout);
    s.smemPaddingBytes = integer("smem_padding_bytes", s.smemPaddingBytes);
    s.swizzleBytes = integer("swizzle_bytes", s.swizzleBytes);
    s.splitK = integer("split_k", s.splitK);
    s.clusterM = integer("cluster_m", s.clusterM);
    s.clusterN = integer("cluster_n", s.clusterN);
    s.consumerWarpgroups = integer("consumer_warpgroups", s.consumerWarpgroups);
    s.raster = json.value(QLatin1String("raster")).toString(s.raster);
    s.groupSize = integer("group_size", s.groupSize);
    s.epilogue = json.value(QLatin1String("epilogue")).toString(s.epilogue);
    s.params = json.value(QLatin1String("params")).toObject();
    s.rationale = json.value(QLatin1String("rationale")).toString();
    const QStringList problems = s.validate();
    if (!problems.isEmpty()) {
        if (error)
            *error = problems.join(u'\n');
        return std::nullopt;
    }
    return s;
}

QStringList Strategy::validate() const {
    QStringList problems = strategySchema().validate(toJson(), QStringLiteral("strategy"));
    if (!problems.isEmpty())
        return problems;
    const auto rule = [&problems](bool ok, const QString& message) {
        if (!ok)
            problems << message;
    };
    if (rationale.trimmed().isEmpty())
        problems << QStringLiteral("strategy.rationale: must say why this plan");
    for (const auto& [name, value] : {std::pair{QStringLiteral("block_m"), blockM},
                                      std::pair{QStringLiteral("block_n"), blockN},
                                      std::pair{QStringLiteral("block_k"), blockK}})
        rule(isPowerOfTwo(value) || value % 16 == 0,
             QStringLiteral("strategy.") + name + QStringLiteral(": ") + QString::number(value) +
                 QStringLiteral(" must be a power of two or a multiple of 16"));

    const QString expectedMma =
        family == QLatin1String("fma_tiled") || family == QLatin1String("fma_regblock")
            ? QStringLiteral("fma")
        : family == QLatin1String("wmma")      ? QStringLiteral("wmma")
        : family == QLatin1String("mma_sync")  ? QStringLiteral("mma.sync")
        : family == QLatin1String("wgmma_tma") ? QStringLiteral("wgmma")
                                               : QString();
    rule(expectedMma.isEmpty() || mma == expectedMma,
         QStringLiteral("strategy.mma: family ") + family + QStringLiteral(" uses \"") +
             expectedMma + QStringLiteral("\", not \"") + mma + u'"');

    if (warpM > 0 || warpN > 0) {
        rule(warpM > 0 && warpN > 0,
             QStringLiteral("strategy.warp_m/warp_n: give both or neither"));
        if (warpM > 0 && warpN > 0) {
            rule(blockM % warpM == 0, QStringLiteral("strategy.warp_m: ") + QString::number(warpM) +
                                          QStringLiteral(" does not divide block_m ") +
                                          QString::number(blockM));
            rule(blockN % warpN == 0, QStringLiteral("strategy.warp_n: ") + QString::number(warpN) +
                                          QStringLiteral(" does not divide block_n ") +
                                          QString::number(blockN));
            if (blockM % warpM == 0 && blockN % warpN == 0 && mma != QLatin1String("wgmma")) {
                const int tiles = (blockM / warpM) * (blockN / warpN);
                rule(tiles == warps, QStringLiteral("strategy.warps: ") + QString::number(warps) +
                                         QStringLiteral(" warps but the warp tiles make ") +
                                         QString::number(tiles));
            }
        }
    }
    if (mma == QLatin1String("mma.sync") || mma == QLatin1String("wmma")) {
        rule(blockK % 16 == 0, QStringLiteral("strategy.block_k: ") + mma +
                                   QStringLiteral(" needs a multiple of 16"));
        rule(warpM == 0 || warpM % 16 == 0,
             QStringLiteral("strategy.warp_m: ") + mma + QStringLiteral(" needs a multiple of 16"));
        rule(warpN == 0 || warpN % 8 == 0,
             QStringLiteral("strategy.warp_n: ") + mma + QStringLiteral(" needs a multiple of 8"));
    }
    if (mma == QLatin1String("wgmma")) {
        // Swapped operands (params.swap_rows, the wgmma_tma family) put C's rows on the wgmma N.
        const bool swapped = params.value(QLatin1String("swap_rows")).toInt(0) > 0;
        rule(swapped ? blockM % 16 == 0 : blockM % 64 == 0,
             swapped ? QStringLiteral("strategy.block_m: wgmma on swapped operands needs a "
                                      "multiple of 16")
                     : QStringLiteral("strategy.block_m: wgmma needs a multiple of 64"));
        rule(warps % 4 == 0,
             QStringLiteral("strategy.warps: wgmma needs whole warpgroups (a multiple of 4)"));
        rule(consumerWarpgroups == 0 || warps == 4 * (consumerWarpgroups + 1),
             QStringLiteral("strategy.consumer_warpgroups: ") +
                 QString::number(consumerWarpgroups) +
                 QStringLiteral(" consumers plus one producer need ") +
                 QString::number(4 * (consumerWarpgroups + 1)) + QStringLiteral(" warps, not ") +
                 QString::number(warps));
    } else {
        rule(consumerWarpgroups == 0,
             QStringLiteral("strategy.consumer_warpgroups: only for wgmma"));
        rule(clusterM * clusterN == 1,
             QStringLiteral("strategy.cluster_m/cluster_n: clusters need wgmma_tma"));
        rule(epilogue != QLatin1String("tma_store"),
             QStringLiteral("strategy.epilogue: tma_store needs wgmma_tma"));
    }
    rule(smemLayout != QLatin1String("padded") || smemPaddingBytes > 0,
         QStringLiteral("strategy.smem_padding_bytes: a padded layout needs a padding"));
    rule(smemLayout == QLatin1String("padded") || smemPaddingBytes == 0,
         QStringLiteral("strategy.smem_padding_bytes: padding is only for the padded layout"));
    rule(smemLayout != QLatin1String("swizzled") || swizzleBytes > 0,
         QStringLiteral("strategy.swizzle_bytes: a swizzled layout needs 32, 64 or 128"));
    rule(smemLayout == QLatin1String("swizzled") || swizzleBytes == 0,
         QStringLiteral("strategy.swizzle_bytes: swizzle is only for the swizzled layout"));
    rule(raster == QLatin1String("row") || groupSize >= 1,
         QStringLiteral("strategy.group_size: must be at least 1"));
    rule(warps * 32 <= 1024, QStringLiteral("strategy.warps: more than 1024 threads per block"));
    return problems;
}

QString Strategy::toText() const {
    QString text = QStringLiteral("# Kevolve strategy: edit the values, keep the keys.\n");
    const QJsonObject json = toJson();
    const QStringList order = {QStringLiteral("family"),
                               QStringLiteral("block_m"),
                               QStringLiteral("block_n"),
                               QStringLiteral("block_k"),
                               QStringLiteral("warps"),
                               QStringLiteral("warp_m"),
                               QStringLiteral("warp_n"),
                               QStringLiteral("mma"),
                               QStringLiteral("vector_width"),
                               QStringLiteral("stages"),
                               QStringLiteral("smem_layout"),
                               QStringLiteral("smem_padding_bytes"),
                               QStringLiteral("swizzle_bytes"),
                               QStringLiteral("split_k"),
                               QStringLiteral("cluster_m"),
                               QStringLiteral("cluster_n"),
                               QStringLiteral("consumer_warpgroups"),
                               QStringLiteral("raster"),
                               QStringLiteral("group_size"),
                               QStringLiteral("epilogue")};
    for (const auto& key : order)
        text += key + QStringLiteral(": ") + yamlValue(json.value(key)) + u'\n';
    if (params.isEmpty()) {
        text += QStringLiteral("params: {}\n");
    } else {
        text += QStringLiteral("params:\n");
        for (auto it = params.begin(); it != params.end(); ++it)
            text += QStringLiteral("  ") + it.key() + QStringLiteral(": ") + yamlValue(it.value()) +
                    u'\n';
    }
    text += QStringLiteral("rationale: ") + quoted(rationale) + u'\n';
    return text;
}

std::optional<Strategy> Strategy::fromText(const QString& text, QString* error) {
    QString parseError;
    std::optional<QJsonObject> json;
    if (text.trimmed().startsWith(u'{'))
        json = parseJsonObject(text.toUtf8(), &parseError);
    else
        json = parseYamlSubset(text, &parseError);
    if (!json) {
        if (error)
            *error = QStringLiteral("strategy text: ") + parseError;
        return std::nullopt;
    }
    return fromJson(*json, error);
}

qint64 Strategy::smemBytes(int elementBytes) const {
    const qint64 aTile = static_cast<qint64>(blockM) * blockK * elementBytes;
    const qint64 bTile = static_cast<qint64>(blockK) * blockN * elementBytes;
    const qint64 padding = smemLayout == QLatin1String("padded")
                               ? static_cast<qint64>(smemPaddingBytes) * (blockM + blockK)
                               : 0;
    return (aTile + bTile + padding) * stages;
}

QString Strategy::summary() const {
    // The memory-bound families (vectors_per_thread among their params) have no GEMM tile: they
    // are named by warps, vectors per thread x elements per vector, then their other knobs, the
    // defaults (none, load, 0, split 1) left out, e.g. "rowwise w8 8x4 2/SM block prefetch
    // two_pass".
    if (params.contains(QLatin1String("vectors_per_thread"))) {
        QString text = family + QStringLiteral(" w") + QString::number(warps) + u' ' +
                       QString::number(params.value(QLatin1String("vectors_per_thread")).toInt()) +
                       u'x' + QString::number(vectorWidth);
        for (auto it = params.begin(); it != params.end(); ++it) {
            const QString key = it.key();
            const QJsonValue value = it.value();
            if (key == QLatin1String("vectors_per_thread"))
                continue;
            if (value.isString()) {
                const QString v = value.toString();
                if (v == QLatin1String("registers"))
                    text += QStringLiteral(" W/B-in-registers");
                else if (!v.isEmpty() && v != QLatin1String("none") && v != QLatin1String("load"))
                    text += u' ' + v;
            } else if (value.isDouble()) {
                const int n = value.toInt();
                if (key == QLatin1String("ctas_per_sm")) {
                    if (n > 0)
                        text += u' ' + QString::number(n) + QStringLiteral("/SM");
                } else if (n != 0 && !(key == QLatin1String("split_m") && n == 1)) {
                    text += u' ' + key + u'=' + QString::number(n);
                }
            }
        }
        return text;
    }
    // GEMM families: the tile, warps and stages, then every other knob whose value differs from
    // a default Strategy, so two different configurations never read alike (issue 18: a beam's
    // four "wgmma_tma 128x256x64 w12 s4" hid their differences). The MMA instruction follows
    // from the family and is left out.
    QString text = family + u' ' + QString::number(blockM) + u'x' + QString::number(blockN) + u'x' +
                   QString::number(blockK) + QStringLiteral(" w") + QString::number(warps) +
                   QStringLiteral(" s") + QString::number(stages);
    const Strategy d;
    if (warpM != d.warpM || warpN != d.warpN)
        text += QStringLiteral(" warp=") + QString::number(warpM) + u'x' + QString::number(warpN);
    if (vectorWidth != d.vectorWidth)
        text += QStringLiteral(" vec=") + QString::number(vectorWidth);
    if (smemLayout != d.smemLayout)
        text += u' ' + smemLayout;
    if (smemPaddingBytes != d.smemPaddingBytes)
        text += QStringLiteral(" pad=") + QString::number(smemPaddingBytes);
    if (swizzleBytes != d.swizzleBytes)
        text += QStringLiteral(" swizzle=") + QString::number(swizzleBytes);
    if (splitK != d.splitK)
        text += QStringLiteral(" splitK=") + QString::number(splitK);
    if (clusterM != d.clusterM || clusterN != d.clusterN)
        text += QStringLiteral(" cluster=") + QString::number(clusterM) + u'x' +
                QString::number(clusterN);
    if (consumerWarpgroups != d.consumerWarpgroups)
        text += QStringLiteral(" consumers=") + QString::number(consumerWarpgroups);
    if (raster != d.raster || groupSize != d.groupSize)
        text += u' ' + raster +
                (groupSize != d.groupSize ? u'/' + QString::number(groupSize) : QString());
    if (epilogue != d.epilogue)
        text += QStringLiteral(" epilogue=") + epilogue;
    for (auto it = params.begin(); it != params.end(); ++it) {
        const QJsonValue value = it.value();
        text +=
            u' ' + it.key() + u'=' +
            (value.isDouble() ? QString::number(value.toDouble()) : value.toVariant().toString());
    }
    return text;
}

} // namespace kev
