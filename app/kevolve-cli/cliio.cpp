#include "cliio.h"

namespace kev::cli {

QTextStream& out() {
    static QTextStream stream(stdout);
    return stream;
}

QTextStream& err() {
    static QTextStream stream(stderr);
    return stream;
}

int usageError(const QString& message) {
    err() << "kevolve-cli: " << message << "\nRun kevolve-cli --help for usage.\n";
    err().flush();
    return ExitUsage;
}

int failure(const QString& message, int code) {
    err() << "kevolve-cli: " << message << Qt::endl;
    return code;
}

QString fmt(const std::optional<double>& value, int decimals) {
    return value ? QString::number(*value, 'f', decimals) : QStringLiteral("-");
}

} // namespace kev::cli
