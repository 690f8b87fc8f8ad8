#include "sessionstore.h"

#include "jsonschema.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>
#include <QSet>
#include <QThread>
#include <QUuid>

#include <algorithm>

namespace kev {

namespace {

const QString kIndexFile = QStringLiteral("index.jsonl");
const QString kInfoFile = QStringLiteral("session.json");

QString versioned(const QString& prefix, int version, const QString& suffix) {
    return prefix + QString::number(version) + suffix;
}

// Crash-safety tests widen the gaps between a step's files ($KEVOLVE_TEST_STEP_WRITE_PAUSE_MS) so
// that a kill lands between them; unset, this does nothing.
void pauseForCrashTests() {
    static const int pauseMs = qEnvironmentVariableIntValue("KEVOLVE_TEST_STEP_WRITE_PAUSE_MS");
    if (pauseMs > 0)
        QThread::msleep(static_cast<unsigned long>(pauseMs));
}

QByteArray pretty(const QJsonObject& json) {
    return QJsonDocument(json).toJson(QJsonDocument::Indented);
}

} // namespace

QJsonObject SessionInfo::toJson() const {
    QJsonObject json{
        {QStringLiteral("kind"), QStringLiteral("kevolve.session")},
        {QStringLiteral("schema_version"), 1},
        {QStringLiteral("id"), id},
        {QStringLiteral("created"), created.toUTC().toString(Qt::ISODateWithMs)},
        {QStringLiteral("task"), task.toJson()},
        {QStringLiteral("settings"), settings.toJson()},
    };
    if (device)
        json.insert(QStringLiteral("device"), device->toJson());
    if (!harnessVersion.isEmpty())
        json.insert(QStringLiteral("harness_version"), harnessVersion);
    return json;
}

std::optional<SessionInfo> SessionInfo::fromJson(const QJsonObject& json, QString* error) {
    if (json.value(QLatin1String("kind")).toString() != QLatin1String("kevolve.session")) {
        if (error)
            *error = QStringLiteral("session.json: kind is not \"kevolve.session\"");
        return std::nullopt;
    }
    if (json.value(QLatin1String("schema_version")).toInt() != 1) {
        if (error)
            *error = QStringLiteral("session.json: schema_version is not 1");
        return std::nullopt;
    }
    SessionInfo info;
    info.id = json.value(QLatin1String("id")).toString();
    info.created =
        QDateTime::fromString(json.value(QLatin1String("created")).toString(), Qt::ISODateWithMs);
    QString taskError;
    auto task = Task::fromJson(json.value(QLatin1String("task")).toObject(), &taskError);
    if (!task) {
        if (error)
            *error = QStringLiteral("session.json: ") + taskError;
        return std::nullopt;
    }
    info.task = *task;
    QString settingsError;
    auto settings =
        EngineSettings::fromJson(json.value(QLatin1String("settings")).toObject(), &settingsError);
    if (!settings) {
        if (error)
            *error = QStringLiteral("session.json: ") + settingsError;
        return std::nullopt;
    }
    info.settings = *settings;
    if (json.contains(QLatin1String("device")))
        info.device = DeviceInfo::fromJson(json.value(QLatin1String("device")).toObject());
    info.harnessVersion = json.value(QLatin1String("harness_version")).toString();
    return info;
}

bool writeFileAtomically(const QString& path, const QByteArray& data, QString* error) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(data) != data.size() || !file.commit()) {
        if (error)
            *error = path + QStringLiteral(": ") + file.errorString();
        return false;
    }
    return true;
}

std::optional<SessionStore> SessionStore::create(const QString& dir, const Task& task,
                                                 const EngineSettings& settings, QString* error) {
    if (isSession(dir)) {
        if (error)
            *error = dir + QStringLiteral(": already holds a session (use resume)");
        return std::nullopt;
    }
    QDir root(dir);
    for (const auto& sub :
         {QStringLiteral("plans"), QStringLiteral("generated"), QStringLiteral("logs")}) {
        if (!root.mkpath(sub)) {
            if (error)
                *error = root.filePath(sub) + QStringLiteral(": cannot create the folder");
            return std::nullopt;
        }
    }
    SessionStore store;
    store.m_dir = root.absolutePath();
    store.m_info.id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    store.m_info.created = QDateTime::currentDateTimeUtc();
    store.m_info.task = task;
    store.m_info.settings = settings;
    store.m_repaired = true;
    if (!writeFileAtomically(store.infoPath(), pretty(store.m_info.toJson()), error))
        return std::nullopt;
    return store;
}

bool SessionStore::isSession(const QString& dir) {
    return QFileInfo::exists(QDir(dir).filePath(kInfoFile));
}

std::optional<SessionStore> SessionStore::open(const QString& dir, QString* error) {
    const QDir root(dir);
    if (!isSession(dir)) {
        if (error)
            *error = dir + QStringLiteral(": not a Kevolve session (no session.json)");
        return std::nullopt;
    }
    SessionStore store;
    store.m_dir = root.absolutePath();
    QString readError;
    const auto json = readJsonObjectFile(store.infoPath(), &readError);
    if (!json) {
        if (error)
            *error = readError;
        return std::nullopt;
    }
    auto info = SessionInfo::fromJson(*json, error);
    if (!info)
        return std::nullopt;
    store.m_info = *info;

    QFile index(store.indexPath());
    if (index.exists()) {
        if (!index.open(QIODevice::ReadOnly)) {
            if (error)
                *error = store.indexPath() + QStringLiteral(": ") + index.errorString();
            return std::nullopt;
        }
        const QByteArray data = index.readAll();
        qsizetype start = 0;
        int lineNumber = 0;
        while (start < data.size()) {
            const qsizetype end = data.indexOf('\n', start);
            ++lineNumber;
            // A line without its newline was cut by a crash before the step completed.
            if (end < 0)
                break;
            const QByteArray line = data.mid(start, end - start);
            start = end + 1;
            if (line.trimmed().isEmpty())
                continue;
            QString lineError;
            const auto object = parseJsonObject(line, &lineError);
            std::optional<IterationSummary> summary;
            if (object)
                summary = IterationSummary::fromJson(*object, &lineError);
            if (!summary) {
                if (error)
                    *error = store.indexPath() + QStringLiteral(": line ") +
                             QString::number(lineNumber) + QStringLiteral(": ") + lineError;
                return std::nullopt;
            }
            store.m_steps.append(*summary);
        }
    }
    return store;
}

bool SessionStore::updateInfo(const SessionInfo& info, QString* error) {
    if (!writeFileAtomically(infoPath(), pretty(info.toJson()), error))
        return false;
    m_info = info;
    return true;
}

std::optional<IterationSummary> SessionStore::step(int version) const {
    for (const auto& s : m_steps) {
        if (s.version == version)
            return s;
    }
    return std::nullopt;
}

int SessionStore::nextVersion() const {
    int last = 0;
    for (const auto& s : m_steps)
        last = std::max(last, s.version);
    return last + 1;
}

int SessionStore::lastIteration() const {
    int last = 0;
    for (const auto& s : m_steps)
        last = std::max(last, s.iteration);
    return last;
}

std::optional<int> SessionStore::bestVersion() const {
    std::optional<int> best;
    double bestSpeedup = 0;
    for (const auto& s : m_steps) {
        const bool eligible = s.status == QLatin1String("ok") && s.speedup &&
                              s.decision != QLatin1String("rejected") &&
                              (!s.suspicious || s.decision == QLatin1String("approved"));
        if (eligible && (!best || *s.speedup > bestSpeedup)) {
            best = s.version;
            bestSpeedup = *s.speedup;
        }
    }
    return best;
}

bool SessionStore::repair(QString* error) {
    QFile index(indexPath());
    if (index.exists()) {
        if (!index.open(QIODevice::ReadOnly)) {
            if (error)
                *error = indexPath() + QStringLiteral(": ") + index.errorString();
            return false;
        }
        const QByteArray data = index.readAll();
        index.close();
        if (!data.isEmpty() && !data.endsWith('\n')) {
            const QByteArray complete = data.left(data.lastIndexOf('\n') + 1);
            if (!writeFileAtomically(indexPath(), complete, error))
                return false;
        }
    }
    QSet<int> recorded;
    for (const auto& s : m_steps)
        recorded.insert(s.version);
    const QDir root(m_dir);
    const struct {
        const char* folder;
        const char* prefix;
    } kinds[] = {{"plans", "plan_v"}, {"generated", "kernel_v"}, {"logs", "run_v"}};
    for (const auto& kind : kinds) {
        QDir folder(root.filePath(QLatin1String(kind.folder)));
        for (const auto& name : folder.entryList(QDir::Files)) {
            const QString prefix = QLatin1String(kind.prefix);
            if (!name.startsWith(prefix))
                continue;
            bool ok = false;
            const int version = name.mid(prefix.size()).section(u'.', 0, 0).toInt(&ok);
            if (ok && !recorded.contains(version))
                folder.remove(name);
        }
    }
    m_repaired = true;
    return true;
}

bool SessionStore::appendStep(const Candidate& candidate, QString* error) {
    if (candidate.version < 1) {
        if (error)
            *error = QStringLiteral("step version must be at least 1");
        return false;
    }
    if (step(candidate.version)) {
        if (error)
            *error = QStringLiteral("step v") + QString::number(candidate.version) +
                     QStringLiteral(" is already in the session");
        return false;
    }
    if (!m_repaired && !repair(error))
        return false;
    QDir root(m_dir);
    for (const auto& sub :
         {QStringLiteral("plans"), QStringLiteral("generated"), QStringLiteral("logs")})
        root.mkpath(sub);
    if (!writeFileAtomically(planPath(candidate.version), pretty(candidate.strategy.toJson()),
                             error))
        return false;
    pauseForCrashTests();
    if (!writeFileAtomically(kernelPath(candidate.version), candidate.source.toUtf8(), error))
        return false;
    pauseForCrashTests();
    if (!writeFileAtomically(logPath(candidate.version), pretty(logJson(candidate)), error))
        return false;
    pauseForCrashTests();

    const IterationSummary summary = IterationSummary::fromCandidate(candidate);
    QFile index(indexPath());
    if (!index.open(QIODevice::WriteOnly | QIODevice::Append)) {
        if (error)
            *error = indexPath() + QStringLiteral(": ") + index.errorString();
        return false;
    }
    // One write call per record, so a kill leaves either the whole line or a cut one (dropped on
    // the next open), never a record that reads as complete.
    const QByteArray line = QJsonDocument(summary.toJson()).toJson(QJsonDocument::Compact) + '\n';
    if (index.write(line) != line.size() || !index.flush()) {
        if (error)
            *error = indexPath() + QStringLiteral(": ") + index.errorString();
        return false;
    }
    index.close();
    m_steps.append(summary);
    return true;
}

QJsonObject SessionStore::logJson(const Candidate& c) {
    QJsonArray turns;
    for (const auto& t : c.turns)
        turns.append(t.toJson());
    QJsonObject json{
        {QStringLiteral("kind"), QStringLiteral("kevolve.step")},
        {QStringLiteral("schema_version"), 1},
        {QStringLiteral("version"), c.version},
        {QStringLiteral("parent"), c.parentVersion},
        {QStringLiteral("iteration"), c.iteration},
        {QStringLiteral("beam"), c.beamIndex},
        {QStringLiteral("origin"), c.origin},
        {QStringLiteral("code_attempts"), c.codeAttempts},
        {QStringLiteral("turns"), turns},
        {QStringLiteral("failed_sources"), QJsonArray::fromStringList(c.failedSources)},
        {QStringLiteral("decision"), c.decision.toJson()},
        {QStringLiteral("seconds"), c.seconds},
        {QStringLiteral("finished_at"), c.finishedAt.toUTC().toString(Qt::ISODateWithMs)},
    };
    if (c.report) {
        json.insert(QStringLiteral("report"), c.report->toJson());
        if (!c.report->measuredBy.isEmpty())
            json.insert(QStringLiteral("measured_by"), c.report->measuredBy);
    }
    if (c.review)
        json.insert(QStringLiteral("review"), c.review->toJson());
    return json;
}

std::optional<Candidate> SessionStore::loadCandidate(int version, QString* error) const {
    const auto summary = step(version);
    if (!summary) {
        if (error)
            *error = QStringLiteral("no step v") + QString::number(version) +
                     QStringLiteral(" in ") + m_dir;
        return std::nullopt;
    }
    const auto log = readJsonObjectFile(logPath(version), error);
    if (!log)
        return std::nullopt;
    auto plan = loadPlan(version, error);
    if (!plan)
        return std::nullopt;
    auto source = loadSource(version, error);
    if (!source)
        return std::nullopt;
    Candidate c;
    c.version = version;
    c.parentVersion = log->value(QLatin1String("parent")).toInt();
    c.iteration = log->value(QLatin1String("iteration")).toInt();
    c.beamIndex = log->value(QLatin1String("beam")).toInt();
    c.origin = log->value(QLatin1String("origin")).toString();
    c.codeAttempts = log->value(QLatin1String("code_attempts")).toInt();
    c.strategy = *plan;
    c.source = *source;
    for (const auto& t : log->value(QLatin1String("turns")).toArray())
        c.turns.append(AgentTurn::fromJson(t.toObject()));
    for (const auto& s : log->value(QLatin1String("failed_sources")).toArray())
        c.failedSources << s.toString();
    c.decision = Decision::fromJson(log->value(QLatin1String("decision")).toObject());
    c.seconds = log->value(QLatin1String("seconds")).toDouble();
    c.finishedAt = QDateTime::fromString(log->value(QLatin1String("finished_at")).toString(),
                                         Qt::ISODateWithMs);
    if (log->contains(QLatin1String("report"))) {
        QString reportError;
        auto report = EvaluationReport::fromJson(log->value(QLatin1String("report")).toObject(),
                                                 &reportError);
        if (!report) {
            if (error)
                *error = logPath(version) + QStringLiteral(": ") + reportError;
            return std::nullopt;
        }
        c.report = *report;
        c.report->measuredBy = log->value(QLatin1String("measured_by")).toObject();
    }
    if (log->contains(QLatin1String("review"))) {
        QString reviewError;
        auto review =
            ReviewFeedback::fromJson(log->value(QLatin1String("review")).toObject(), &reviewError);
        if (!review) {
            if (error)
                *error = logPath(version) + QStringLiteral(": ") + reviewError;
            return std::nullopt;
        }
        c.review = *review;
    }
    return c;
}

std::optional<QString> SessionStore::loadSource(int version, QString* error) const {
    QFile file(kernelPath(version));
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = kernelPath(version) + QStringLiteral(": ") + file.errorString();
        return std::nullopt;
    }
    return QString::fromUtf8(file.readAll());
}

std::optional<Strategy> SessionStore::loadPlan(int version, QString* error) const {
    const auto json = readJsonObjectFile(planPath(version), error);
    if (!json)
        return std::nullopt;
    QString planError;
    auto plan = Strategy::fromJson(*json, &planError);
    if (!plan && error)
        *error = planPath(version) + QStringLiteral(": ") + planError;
    return plan;
}

QString SessionStore::planPath(int version) const {
    return QDir(m_dir).filePath(
        versioned(QStringLiteral("plans/plan_v"), version, QStringLiteral(".json")));
}

QString SessionStore::kernelPath(int version) const {
    return QDir(m_dir).filePath(
        versioned(QStringLiteral("generated/kernel_v"), version, QStringLiteral(".cu")));
}

QString SessionStore::logPath(int version) const {
    return QDir(m_dir).filePath(
        versioned(QStringLiteral("logs/run_v"), version, QStringLiteral(".json")));
}

QString SessionStore::indexPath() const {
    return QDir(m_dir).filePath(kIndexFile);
}

QString SessionStore::infoPath() const {
    return QDir(m_dir).filePath(kInfoFile);
}

} // namespace kev
