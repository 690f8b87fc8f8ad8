#include "knowledgehints.h"

#include <QStringList>

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

// log2 of the ratio of two extents; a dimension an op does not use (0 on both sides) adds 0.
double octaves(qint64 a, qint64 b) {
    return std::log2(double(std::max<qint64>(a, 0) + 1) / double(std::max<qint64>(b, 0) + 1));
}

QString dateOf(const QDateTime& at) {
    return at.isValid() ? at.toUTC().date().toString(Qt::ISODate) : u"undated"_s;
}

QString taskLabel(const TaskFeatures& t) {
    const QString name = t.taskName.isEmpty() ? t.shapeText() : t.taskName;
    return t.deviceName.isEmpty() ? name : name + u" on "_s + t.deviceName;
}

} // namespace

TaskFeatures TaskFeatures::of(const Task& task, const DeviceInfo& device) {
    TaskFeatures f;
    f.taskName = task.name;
    f.op = task.op;
    QStringList types;
    for (auto it = task.tensorDtypes.cbegin(); it != task.tensorDtypes.cend(); ++it)
        types << it.key() + u':' + it.value();
    if (types.isEmpty())
        types = {u"a:"_s + task.a, u"b:"_s + task.b, u"c:"_s + task.c};
    f.dtypes = types.join(u',');
    f.m = task.m;
    f.n = task.n;
    f.k = task.k;
    f.deviceName = device.name;
    f.smCount = device.smCount;
    f.driver = device.driver;
    return f;
}

QString TaskFeatures::shapeText() const {
    QString shape = QString::number(m) + u'x' + QString::number(n);
    if (k > 0)
        shape += u'x' + QString::number(k);
    return op + u' ' + shape + u' ' + dtypes;
}

std::optional<double> featureDistance(const TaskFeatures& task, const TaskFeatures& other) {
    if (task.op != other.op || task.dtypes != other.dtypes)
        return std::nullopt;
    const double dm = octaves(task.m, other.m);
    const double dn = octaves(task.n, other.n);
    const double dk = octaves(task.k, other.k);
    double d = std::sqrt(dm * dm + dn * dn + dk * dk);
    if (task.deviceName != other.deviceName)
        d += 1.0;
    else if (task.smCount != other.smCount)
        d += 0.5;
    return d;
}

QString KnowledgePrior::citation() const {
    QString result = u"from %1: %2x"_s.arg(taskLabel(task)).arg(speedup, 0, 'f', 2);
    if (percentOfFloor)
        result += u" (%1% of the DRAM floor)"_s.arg(*percentOfFloor, 0, 'f', 1);
    return result +
           u", %1 (%2, session %3 v%4)"_s.arg(dateOf(recordedAt), plan.summary(), sessionId)
               .arg(version);
}

QString KnowledgeDecision::line() const {
    if (kind == Kind::Rejected)
        return u"a person rejected %1 on %2 (%3): \"%4\""_s.arg(plan.summary(), taskLabel(task),
                                                                dateOf(recordedAt), reason);
    QString result = u"a person edited and approved %1 on %2 (%3"_s.arg(
        plan.summary(), taskLabel(task), dateOf(recordedAt));
    if (speedup)
        result += u", %1x"_s.arg(*speedup, 0, 'f', 2);
    result += u"); the edit: "_s;
    // A prompt and a rationale quote the edit; a long one is cut where a line ends.
    constexpr qsizetype kMaxEdit = 600;
    QString edit = editDiff.trimmed();
    if (edit.size() > kMaxEdit) {
        const qsizetype cut = edit.lastIndexOf(u'\n', kMaxEdit);
        edit = edit.left(cut > 0 ? cut : kMaxEdit) + u"\n... (edit cut)"_s;
    }
    return result + (edit.isEmpty() ? u"(not recorded)"_s : edit);
}

QStringList KnowledgeHints::lines() const {
    QStringList out;
    for (const KnowledgePrior& p : priors)
        out << u"best configuration "_s + p.citation();
    for (const KnowledgeDecision& d : decisions)
        out << d.line();
    return out;
}

QVector<KnowledgeDecision> KnowledgeHints::rejections() const {
    QVector<KnowledgeDecision> out;
    for (const KnowledgeDecision& d : decisions) {
        if (d.kind == KnowledgeDecision::Kind::Rejected)
            out << d;
    }
    return out;
}

} // namespace kev
