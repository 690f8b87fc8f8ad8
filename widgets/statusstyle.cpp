#include "statusstyle.h"

#include <QHash>
#include <QPainter>
#include <QPixmap>

namespace kev {

using namespace Qt::StringLiterals;

QColor StatusStyle::color(const QString& status) {
    if (status == u"ok")
        return QColor(0x3f, 0xa3, 0x4d);
    if (status == u"compile_error")
        return QColor(0xc0, 0x7b, 0x1a);
    if (status == u"rule_violation")
        return QColor(0x8e, 0x44, 0xad);
    if (status == u"incorrect")
        return QColor(0xd0, 0x3b, 0x3b);
    if (status == u"runtime_error" || status == u"timeout")
        return QColor(0xa9, 0x32, 0x26);
    if (status == u"unstable")
        return QColor(0x2e, 0x86, 0xc1);
    return QColor(0x80, 0x80, 0x80);
}

QIcon StatusStyle::icon(const QString& status, bool suspicious) {
    // Icons are drawn, not loaded: a filled disc in the status colour, with a ring when flagged
    // suspicious, so the same picture works on every platform theme.
    static QHash<QString, QIcon> cache;
    const QString key = status + (suspicious ? u"!"_s : QString());
    const auto it = cache.constFind(key);
    if (it != cache.constEnd())
        return *it;
    QPixmap pixmap(16, 16);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(Qt::NoPen);
    painter.setBrush(color(status));
    painter.drawEllipse(QRectF(3, 3, 10, 10));
    if (suspicious) {
        painter.setBrush(Qt::NoBrush);
        painter.setPen(QPen(QColor(0xe8, 0xb0, 0x4a), 2));
        painter.drawEllipse(QRectF(1, 1, 14, 14));
    }
    painter.end();
    const QIcon result(pixmap);
    cache.insert(key, result);
    return result;
}

QString StatusStyle::label(const QString& status) {
    if (status == u"ok")
        return u"correct"_s;
    if (status == u"compile_error")
        return u"compile error"_s;
    if (status == u"rule_violation")
        return u"rule violation"_s;
    if (status == u"runtime_error")
        return u"runtime error"_s;
    if (status == u"no_device")
        return u"no device"_s;
    return status;
}

QString StatusStyle::decisionLabel(const QString& decision) {
    if (decision == u"automatic")
        return u"auto"_s;
    return decision;
}

QColor StatusStyle::decisionColor(const QString& decision) {
    if (decision == u"approved")
        return QColor(0x3f, 0xa3, 0x4d);
    if (decision == u"rejected")
        return QColor(0xd0, 0x3b, 0x3b);
    if (decision == u"edited")
        return QColor(0x2e, 0x86, 0xc1);
    if (decision == u"pending")
        return QColor(0xc0, 0x7b, 0x1a);
    return QColor(0x80, 0x80, 0x80);
}

QString StatusStyle::speedup(double value) {
    return QString::number(value, 'f', 3) + u"\u00d7"_s;
}

} // namespace kev
