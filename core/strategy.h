// The plan (docs/architecture.md, contract 5): a structured, validated description of the kernel
// the Coding agent must write. Schema: core/schemas/strategy.schema.json
// (":/schemas/strategy.schema.json").
#pragma once

#include <QJsonObject>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <optional>

namespace kev {

struct Strategy {
    // "fma_tiled", "fma_regblock", "wmma", "mma_sync", "wgmma_tma", or a family a backend adds.
    QString family;
    int blockM = 64;
    int blockN = 64;
    int blockK = 16;
    int warps = 4;
    // The warp tile; 0 when the family has none.
    int warpM = 0;
    int warpN = 0;
    // "fma", "wmma", "mma.sync" or "wgmma".
    QString mma = QStringLiteral("fma");
    int vectorWidth = 4;
    int stages = 1;
    // "plain", "padded" or "swizzled".
    QString smemLayout = QStringLiteral("plain");
    int smemPaddingBytes = 0;
    int swizzleBytes = 0;
    int splitK = 1;
    int clusterM = 1;
    int clusterN = 1;
    int consumerWarpgroups = 0;
    // "row", "grouped" or "hilbert".
    QString raster = QStringLiteral("row");
    int groupSize = 1;
    // "direct", "smem" or "tma_store".
    QString epilogue = QStringLiteral("direct");
    QJsonObject params;
    QString rationale;

    QJsonObject toJson() const;
    // Checks the document against the schema and the cross-field rules; *error lists every problem,
    // one per line.
    static std::optional<Strategy> fromJson(const QJsonObject& json, QString* error);

    // Every problem (schema and cross-field rules), each naming its field; empty = valid.
    QStringList validate() const;

    // The text form a person edits: a small YAML subset ("key: value" lines, "params:" with
    // indented entries, strings in double quotes, "#" comments). fromText also accepts JSON.
    QString toText() const;
    static std::optional<Strategy> fromText(const QString& text, QString* error);

    // Shared memory the main loop's tiles need, for inputs of elementBytes each.
    qint64 smemBytes(int elementBytes) const;

    // "mma_sync 128x128x32 w8 s3"
    QString summary() const;

    bool operator==(const Strategy& other) const { return toJson() == other.toJson(); }
    bool operator!=(const Strategy& other) const { return !(*this == other); }
};

} // namespace kev

Q_DECLARE_METATYPE(kev::Strategy)
