#include "jsonschema.h"

#include "safefile.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

#include <cmath>

namespace kev {

namespace {

QString typeOf(const QJsonValue& value) {
    switch (value.type()) {
    case QJsonValue::Null:
        return QStringLiteral("null");
    case QJsonValue::Bool:
        return QStringLiteral("boolean");
    case QJsonValue::Double: {
        const double d = value.toDouble();
        return (std::floor(d) == d && std::isfinite(d)) ? QStringLiteral("integer")
                                                        : QStringLiteral("number");
    }
    case QJsonValue::String:
        return QStringLiteral("string");
    case QJsonValue::Array:
        return QStringLiteral("array");
    case QJsonValue::Object:
        return QStringLiteral("object");
    case QJsonValue::Undefined:
        break;
    }
    return QStringLiteral("undefined");
}

bool matchesType(const QString& wanted, const QString& actual) {
    return wanted == actual ||
           (wanted == QLatin1String("number") && actual == QLatin1String("integer"));
}

QString childPath(const QString& path, const QString& key) {
    return path.isEmpty() ? key : path + u'.' + key;
}

} // namespace

QString jsonBrief(const QJsonValue& value) {
    if (value.isString())
        return u'"' + value.toString() + u'"';
    if (value.isDouble())
        return QString::number(value.toDouble(), 'g', 12);
    if (value.isBool())
        return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    if (value.isNull())
        return QStringLiteral("null");
    return typeOf(value);
}

JsonSchema::JsonSchema(QJsonObject schema)
    : m_schema(std::move(schema)) {}

std::optional<JsonSchema> JsonSchema::load(const QString& path, QString* error) {
    auto object = readJsonObjectFile(path, error);
    if (!object)
        return std::nullopt;
    return JsonSchema(*object);
}

QStringList JsonSchema::validate(const QJsonValue& document, const QString& rootName) const {
    QStringList errors;
    check(m_schema, document, rootName, &errors, 0);
    return errors;
}

QJsonObject JsonSchema::resolve(const QJsonObject& schema) const {
    const QString ref = schema.value(QLatin1String("$ref")).toString();
    const QString prefix = QStringLiteral("#/$defs/");
    if (ref.startsWith(prefix))
        return m_schema.value(QLatin1String("$defs"))
            .toObject()
            .value(ref.mid(prefix.size()))
            .toObject();
    return schema;
}

void JsonSchema::check(const QJsonObject& rawSchema, const QJsonValue& value, const QString& path,
                       QStringList* errors, int depth) const {
    if (depth > 32)
        return;
    const QJsonObject schema = resolve(rawSchema);
    const QString where = path.isEmpty() ? QStringLiteral("(document)") : path;
    const QString actual = typeOf(value);

    if (schema.contains(QLatin1String("type"))) {
        const QJsonValue type = schema.value(QLatin1String("type"));
        QStringList wanted;
        if (type.isArray()) {
            for (const auto& t : type.toArray())
                wanted << t.toString();
        } else {
            wanted << type.toString();
        }
        bool ok = false;
        for (const auto& w : wanted)
            ok = ok || matchesType(w, actual);
        if (!ok) {
            errors->append(where + QStringLiteral(": expected ") +
                           wanted.join(QStringLiteral(" or ")) + QStringLiteral(", got ") + actual);
            return;
        }
    }

    if (schema.contains(QLatin1String("enum"))) {
        const QJsonArray options = schema.value(QLatin1String("enum")).toArray();
        if (!options.contains(value)) {
            QStringList names;
            for (const auto& o : options)
                names << jsonBrief(o);
            errors->append(where + QStringLiteral(": ") + jsonBrief(value) +
                           QStringLiteral(" is not one of ") + names.join(QStringLiteral(", ")));
        }
    }
    if (schema.contains(QLatin1String("const")) && schema.value(QLatin1String("const")) != value)
        errors->append(where + QStringLiteral(": must be ") +
                       jsonBrief(schema.value(QLatin1String("const"))));

    if (value.isDouble()) {
        const double d = value.toDouble();
        if (schema.contains(QLatin1String("minimum")) &&
            d < schema.value(QLatin1String("minimum")).toDouble())
            errors->append(where + QStringLiteral(": ") + jsonBrief(value) +
                           QStringLiteral(" is less than the minimum ") +
                           jsonBrief(schema.value(QLatin1String("minimum"))));
        if (schema.contains(QLatin1String("maximum")) &&
            d > schema.value(QLatin1String("maximum")).toDouble())
            errors->append(where + QStringLiteral(": ") + jsonBrief(value) +
                           QStringLiteral(" is more than the maximum ") +
                           jsonBrief(schema.value(QLatin1String("maximum"))));
        if (schema.contains(QLatin1String("exclusiveMinimum")) &&
            d <= schema.value(QLatin1String("exclusiveMinimum")).toDouble())
            errors->append(where + QStringLiteral(": ") + jsonBrief(value) +
                           QStringLiteral(" must be more than ") +
                           jsonBrief(schema.value(QLatin1String("exclusiveMinimum"))));
        if (schema.contains(QLatin1String("exclusiveMaximum")) &&
            d >= schema.value(QLatin1String("exclusiveMaximum")).toDouble())
            errors->append(where + QStringLiteral(": ") + jsonBrief(value) +
                           QStringLiteral(" must be less than ") +
                           jsonBrief(schema.value(QLatin1String("exclusiveMaximum"))));
    }

    if (value.isString()) {
        const QString s = value.toString();
        if (schema.contains(QLatin1String("minLength")) &&
            s.size() < schema.value(QLatin1String("minLength")).toInt())
            errors->append(where + QStringLiteral(": shorter than ") +
                           QString::number(schema.value(QLatin1String("minLength")).toInt()) +
                           QStringLiteral(" characters"));
        if (schema.contains(QLatin1String("maxLength")) &&
            s.size() > schema.value(QLatin1String("maxLength")).toInt())
            errors->append(where + QStringLiteral(": longer than ") +
                           QString::number(schema.value(QLatin1String("maxLength")).toInt()) +
                           QStringLiteral(" characters"));
        if (schema.contains(QLatin1String("pattern"))) {
            const QRegularExpression re(schema.value(QLatin1String("pattern")).toString());
            if (!re.match(s).hasMatch())
                errors->append(where + QStringLiteral(": ") + jsonBrief(value) +
                               QStringLiteral(" does not match ") + re.pattern());
        }
    }

    if (value.isArray()) {
        const QJsonArray array = value.toArray();
        if (schema.contains(QLatin1String("minItems")) &&
            array.size() < schema.value(QLatin1String("minItems")).toInt())
            errors->append(where + QStringLiteral(": needs at least ") +
                           QString::number(schema.value(QLatin1String("minItems")).toInt()) +
                           QStringLiteral(" items"));
        if (schema.contains(QLatin1String("maxItems")) &&
            array.size() > schema.value(QLatin1String("maxItems")).toInt())
            errors->append(where + QStringLiteral(": allows at most ") +
                           QString::number(schema.value(QLatin1String("maxItems")).toInt()) +
                           QStringLiteral(" items"));
        if (schema.value(QLatin1String("items")).isObject()) {
            const QJsonObject items = schema.value(QLatin1String("items")).toObject();
            for (qsizetype i = 0; i < array.size(); ++i)
                check(items, array.at(i), path + u'[' + QString::number(i) + u']', errors,
                      depth + 1);
        }
    }

    if (value.isObject()) {
        const QJsonObject object = value.toObject();
        const QJsonObject properties = schema.value(QLatin1String("properties")).toObject();
        for (const auto& required : schema.value(QLatin1String("required")).toArray()) {
            if (!object.contains(required.toString()))
                errors->append(childPath(path, required.toString()) +
                               QStringLiteral(": required field is missing"));
        }
        const bool closed =
            schema.value(QLatin1String("additionalProperties")) == QJsonValue(false);
        for (auto it = object.begin(); it != object.end(); ++it) {
            if (properties.contains(it.key()))
                check(properties.value(it.key()).toObject(), it.value(), childPath(path, it.key()),
                      errors, depth + 1);
            else if (closed)
                errors->append(childPath(path, it.key()) + QStringLiteral(": unknown field"));
        }
    }
}

std::optional<QJsonObject> parseJsonObject(const QByteArray& text, QString* error) {
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(text, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        if (error)
            *error = QStringLiteral("invalid JSON at offset ") +
                     QString::number(parseError.offset) + QStringLiteral(": ") +
                     parseError.errorString();
        return std::nullopt;
    }
    if (!document.isObject()) {
        if (error)
            *error = QStringLiteral("expected a JSON object");
        return std::nullopt;
    }
    return document.object();
}

std::optional<QJsonObject> readJsonObjectFile(const QString& path, QString* error) {
    const std::optional<QByteArray> text = readRegularFile(path, kMaxJsonFileBytes, error);
    if (!text)
        return std::nullopt;
    QString parseError;
    auto object = parseJsonObject(*text, &parseError);
    if (!object && error)
        *error = path + QStringLiteral(": ") + parseError;
    return object;
}

} // namespace kev
