#include "options.h"

namespace kev::cli {

QString optionName(const QCommandLineOption& option) {
    return QStringLiteral("--") + option.names().constFirst();
}

namespace {

QString badValue(const QCommandLineParser& parser, const QCommandLineOption& option,
                 const QString& expected) {
    return optionName(option) + QStringLiteral(": expected ") + expected +
           QStringLiteral(", got \"") + parser.value(option) + u'"';
}

} // namespace

bool readInt(const QCommandLineParser& parser, const QCommandLineOption& option, int min, int max,
             const QString& expected, int* value, QString* error) {
    if (!parser.isSet(option))
        return true;
    bool ok = false;
    const int parsed = parser.value(option).toInt(&ok);
    if (!ok || parsed < min || parsed > max) {
        *error = badValue(parser, option, expected);
        return false;
    }
    *value = parsed;
    return true;
}

bool readDouble(const QCommandLineParser& parser, const QCommandLineOption& option, double min,
                double max, const QString& expected, double* value, QString* error) {
    if (!parser.isSet(option))
        return true;
    bool ok = false;
    const double parsed = parser.value(option).toDouble(&ok);
    // Written so that NaN, which compares false with everything, is refused too.
    if (!ok || !(parsed >= min && parsed <= max)) {
        *error = badValue(parser, option, expected);
        return false;
    }
    *value = parsed;
    return true;
}

} // namespace kev::cli
