#include "sessionstore.h"

#include "jsonschema.h"
#include "safefile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSet>
#include <QThread>
#include <QUuid>

#include <algorithm>

namespace kev {

namespace {

const QString kIndexFile = QStringLiteral("index.jsonl");
// What a step's log holds in place of the report's task.
const QString kTaskRefKey = QStringLiteral("$ref");
const QString kTaskRef = QStringLiteral("session.json#/harness_task");
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

// The step files' folders and name patterns; the version is the digits between.
struct StepFileKind {
    const char* folder;
    const char* prefix;
    const char* suffix;
};
constexpr StepFileKind kStepFiles[] = {
    {"plans", "plan_v", ".json"}, {"generated", "kernel_v", ".cu"}, {"logs", "run_v", ".json"}};

// The version of a step file's name ("kernel_v12.cu" -> 12); 0 when the name is not one.
int stepFileVersion(const QString& name, const StepFileKind& kind) {
    const QString prefix = QLatin1String(kind.prefix);
    const QString suffix = QLatin1String(kind.suffix);
    if (!name.startsWith(prefix) || !name.endsWith(suffix))
        return 0;
    const QStringView digits =
        QStringView(name).mid(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (digits.isEmpty() || digits.size() > 7 || digits.front() == u'0')
        return 0;
    for (const QChar c : digits) {
        if (c < u'0' || c > u'9')
            return 0;
    }
    const int version = digits.toInt();
    return version <= IterationSummary::kMaxVersion ? version : 0;
}

// QSaveFile writes NAME.XXXXXX (six random letters and digits) next to NAME and renames it; a kill
// leaves it behind. A suffix of lower-case letters only (session.json.backup) may be a person's
// file and is kept: random suffixes are that only once in ~200 times.
bool isOwnTemporary(const QString& name, const QStringList& targets) {
    static const QRegularExpression pattern(QStringLiteral("^(.+)\\.([A-Za-z0-9]{6})$"));
    const QRegularExpressionMatch m = pattern.match(name);
    if (!m.hasMatch() || !targets.contains(m.captured(1)))
        return false;
    const QString suffix = m.captured(2);
    return std::any_of(suffix.begin(), suffix.end(),
                       [](QChar c) { return c.isUpper() || c.isDigit(); });
}

} // namespace

QString IndexProblem::toString() const {
    return QStringLiteral("index.jsonl line ") + QString::number(line) + QStringLiteral(" (byte ") +
           QString::number(byte) + QStringLiteral("): ") + message;
}

IndexContents parseIndex(const QByteArray& data) {
    IndexContents out;
    QHash<int, int> lineOf; // version -> the line holding it
    QSet<int> repairedLines;
    qsizetype start = 0;
    int lineNumber = 0;
    while (start < data.size()) {
        const qsizetype end = data.indexOf('\n', start);
        ++lineNumber;
        const qsizetype lineStart = start;
        const QByteArray line = data.mid(start, end < 0 ? data.size() - start : end - start);
        start = end < 0 ? data.size() : end + 1;
        if (line.trimmed().isEmpty())
            continue;
        if (end < 0) {
            out.problems.append(
                {lineNumber, lineStart,
                 QStringLiteral("cut short (no newline at its end: a write that did "
                                "not finish)"),
                 true});
            break;
        }
        QString lineError;
        const auto object = parseJsonObject(line, &lineError);
        if (object && object->contains(QLatin1String("kevolve_repair"))) {
            repairedLines.insert(object->value(QLatin1String("line")).toInt());
            continue;
        }
        std::optional<IterationSummary> summary;
        if (object)
            summary = IterationSummary::fromJson(*object, &lineError);
        if (!summary) {
            out.problems.append({lineNumber, lineStart, lineError, false});
            continue;
        }
        if (const auto it = lineOf.constFind(summary->version); it != lineOf.constEnd()) {
            out.problems.append({lineNumber, lineStart,
                                 QStringLiteral("v") + QString::number(summary->version) +
                                     QStringLiteral(" again (line ") + QString::number(*it) +
                                     QStringLiteral(" holds it; that one counts)"),
                                 false});
            continue;
        }
        lineOf.insert(summary->version, lineNumber);
        out.steps.append(*summary);
    }
    for (auto& p : out.problems)
        p.repaired = !p.cut && repairedLines.contains(p.line);
    // An index of garbage is reported, not listed line by line.
    constexpr qsizetype kMaxListed = 100;
    if (out.problems.size() > kMaxListed) {
        const qsizetype more = out.problems.size() - kMaxListed + 1;
        const IndexProblem last = out.problems.last();
        out.problems.resize(kMaxListed - 1);
        out.problems.append(
            {last.line, last.byte,
             QString::number(more) +
                 QStringLiteral(
                     " more damaged lines up to this one (the first 99 are listed); this one: ") +
                 last.message,
             last.cut, last.repaired});
    }
    return out;
}

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
    if (!harnessTask.isEmpty())
        json.insert(QStringLiteral("harness_task"), harnessTask);
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
    info.harnessTask = json.value(QLatin1String("harness_task")).toObject();
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

    if (QFileInfo::exists(store.indexPath()) || QFileInfo(store.indexPath()).isSymLink()) {
        const auto data = readRegularFile(store.indexPath(), kMaxIndexFileBytes, error);
        if (!data)
            return std::nullopt;
        IndexContents contents = parseIndex(*data);
        store.m_steps = std::move(contents.steps);
        store.m_problems = std::move(contents.problems);
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
    // Files of a step that never completed keep their version: a new step never overwrites them.
    int last = 0;
    for (const auto& s : m_steps)
        last = std::max(last, s.version);
    for (int v : unrecordedVersions())
        last = std::max(last, v);
    return last + 1;
}

QVector<int> SessionStore::unrecordedVersions() const {
    QSet<int> recorded;
    for (const auto& s : m_steps)
        recorded.insert(s.version);
    QSet<int> found;
    const QDir root(m_dir);
    for (const auto& kind : kStepFiles) {
        const QDir folder(root.filePath(QLatin1String(kind.folder)));
        for (const auto& name : folder.entryList(QDir::Files | QDir::System | QDir::Hidden)) {
            const int version = stepFileVersion(name, kind);
            if (version > 0 && !recorded.contains(version))
                found.insert(version);
        }
    }
    QVector<int> out(found.begin(), found.end());
    std::sort(out.begin(), out.end());
    return out;
}

QStringList SessionStore::damageReport() const {
    QStringList lines;
    for (const auto& p : m_problems) {
        lines << p.toString() +
                     (p.cut        ? QStringLiteral("; resume ends it with a newline and keeps it")
                      : p.repaired ? QStringLiteral("; ended by a resume after a cut, kept as "
                                                    "written")
                                   : QStringLiteral("; resume refuses until the line is fixed"));
    }
    for (int v : unrecordedVersions()) {
        QString why;
        lines << QStringLiteral("v") + QString::number(v) +
                     (readCandidate(v, &why)
                          ? QStringLiteral(": complete step files without an index record; resume "
                                           "appends its record, rebuilt from its log")
                          : QStringLiteral(": incomplete step files without an index record (") +
                                why + QStringLiteral("); kept, and the version is not reused"));
    }
    return lines;
}

bool SessionStore::canWrite(QString* error) const {
    QStringList blocking;
    for (const auto& p : m_problems) {
        if (!p.cut && !p.repaired)
            blocking << p.toString();
    }
    if (blocking.isEmpty())
        return true;
    if (error)
        *error = indexPath() + QStringLiteral(" is damaged:\n  ") +
                 blocking.join(QStringLiteral("\n  ")) +
                 QStringLiteral("\nNothing was written and every file is kept. Fix or delete those "
                                "lines (one JSON record per step, as `kevolve-cli show --json` "
                                "prints them), then resume again.");
    return false;
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

bool SessionStore::prepareForWriting(QString* error) {
    if (m_repaired)
        return true;
    if (!canWrite(error))
        return false;
    m_repairs.clear();
    // A cut last line: ended with a newline so that the next record starts a line of its own. Its
    // bytes stay, and every later open lists it.
    for (const auto& p : std::as_const(m_problems)) {
        if (!p.cut)
            continue;
        const QByteArray record = '\n' +
                                  QJsonDocument(QJsonObject{{QStringLiteral("kevolve_repair"),
                                                             QStringLiteral("cut line")},
                                                            {QStringLiteral("line"), p.line},
                                                            {QStringLiteral("byte"), p.byte}})
                                      .toJson(QJsonDocument::Compact) +
                                  '\n';
        QFile index(indexPath());
        if (!index.open(QIODevice::WriteOnly | QIODevice::Append) ||
            index.write(record) != record.size() || !index.flush()) {
            if (error)
                *error = indexPath() + QStringLiteral(": ") + index.errorString();
            return false;
        }
        m_repairs << QStringLiteral("ended the cut line ") + QString::number(p.line) +
                         QStringLiteral(" of index.jsonl with a newline and a repair record (its "
                                        "bytes are kept)");
        break;
    }
    // Steps whose files are complete but whose record is missing (a crash between the log and the
    // record, or an index cut by a full disk): their records come back, rebuilt from their logs.
    for (int v : unrecordedVersions()) {
        QString why;
        const auto candidate = readCandidate(v, &why);
        if (!candidate) {
            m_repairs << QStringLiteral("kept the incomplete files of v") + QString::number(v) +
                             QStringLiteral(" (") + why + QStringLiteral(")");
            continue;
        }
        if (!appendRecord(IterationSummary::fromCandidate(*candidate), error))
            return false;
        m_repairs << QStringLiteral("appended the lost index record of v") + QString::number(v) +
                         QStringLiteral(", rebuilt from its log");
    }
    removeOwnTemporaryFiles();
    m_repaired = true;
    return true;
}

void SessionStore::removeOwnTemporaryFiles() {
    const QDir root(m_dir);
    const auto sweep = [&](const QDir& folder, const QStringList& targets) {
        for (const auto& name : folder.entryList(QDir::Files | QDir::Hidden)) {
            const QFileInfo info(folder.filePath(name));
            if (!info.isSymLink() && isOwnTemporary(name, targets) &&
                QFile::remove(info.filePath()))
                m_repairs << QStringLiteral("removed the temporary file ") +
                                 root.relativeFilePath(info.filePath()) +
                                 QStringLiteral(" an interrupted write left");
        }
    };
    sweep(root, {kInfoFile, kIndexFile});
    for (const auto& kind : kStepFiles) {
        const QDir folder(root.filePath(QLatin1String(kind.folder)));
        QStringList targets;
        for (const auto& name : folder.entryList(QDir::Files | QDir::Hidden)) {
            const int dot = name.lastIndexOf(u'.');
            if (dot > 0 && stepFileVersion(name.left(dot), kind) > 0)
                targets << name.left(dot);
        }
        sweep(folder, targets);
    }
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
    if (!prepareForWriting(error))
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
    // The task is stored once, in session.json (as the harness normalised it): a report refers to
    // it instead of repeating it (a task of 10^6 validation shapes made every log as large). A
    // report whose task differs keeps its own.
    QJsonObject log = logJson(candidate);
    QJsonObject report = log.value(QLatin1String("report")).toObject();
    const QJsonObject reportTask = report.value(QLatin1String("task")).toObject();
    if (!reportTask.isEmpty()) {
        if (m_info.harnessTask.isEmpty()) {
            SessionInfo info = m_info;
            info.harnessTask = reportTask;
            if (!updateInfo(info, error))
                return false;
        }
        if (reportTask == m_info.harnessTask) {
            report.insert(QStringLiteral("task"), QJsonObject{{kTaskRefKey, kTaskRef}});
            log.insert(QStringLiteral("report"), report);
        }
    }
    if (!writeFileAtomically(logPath(candidate.version), pretty(log), error))
        return false;
    pauseForCrashTests();

    return appendRecord(IterationSummary::fromCandidate(candidate), error);
}

bool SessionStore::appendRecord(const IterationSummary& summary, QString* error) {
    QFile index(indexPath());
    if (!index.open(QIODevice::WriteOnly | QIODevice::Append)) {
        if (error)
            *error = indexPath() + QStringLiteral(": ") + index.errorString();
        return false;
    }
    // One write call per record, so a kill leaves either the whole line or a cut one (listed on
    // the next open and ended by the next resume), never a record that reads as complete.
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
    QJsonArray timeline;
    for (const StageSpan& s : c.timeline) {
        QJsonObject span{{QStringLiteral("stage"), s.stage},
                         {QStringLiteral("start"), s.start.toUTC().toString(Qt::ISODateWithMs)},
                         {QStringLiteral("seconds"), s.seconds}};
        if (!s.detail.isEmpty())
            span.insert(QStringLiteral("detail"), s.detail);
        timeline.append(span);
    }
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
        {QStringLiteral("timeline"), timeline},
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
    if (!step(version)) {
        if (error)
            *error = QStringLiteral("no step v") + QString::number(version) +
                     QStringLiteral(" in ") + m_dir;
        return std::nullopt;
    }
    return readCandidate(version, error);
}

std::optional<Candidate> SessionStore::readCandidate(int version, QString* error) const {
    const auto log = readJsonObjectFile(logPath(version), error);
    if (!log)
        return std::nullopt;
    if (log->value(QLatin1String("version")).toDouble() != version) {
        if (error)
            *error = logPath(version) + QStringLiteral(": its version is not ") +
                     QString::number(version);
        return std::nullopt;
    }
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
    // The timeline only informs: a malformed span is dropped, never the step.
    for (const auto& v : log->value(QLatin1String("timeline")).toArray()) {
        const QJsonObject o = v.toObject();
        StageSpan s;
        s.stage = o.value(QLatin1String("stage")).toString();
        s.start =
            QDateTime::fromString(o.value(QLatin1String("start")).toString(), Qt::ISODateWithMs);
        s.seconds = o.value(QLatin1String("seconds")).toDouble(-1);
        s.detail = o.value(QLatin1String("detail")).toString();
        if (!s.stage.isEmpty() && s.start.isValid() && s.seconds >= 0)
            c.timeline.append(s);
    }
    if (log->contains(QLatin1String("report"))) {
        QString reportError;
        QJsonObject reportJson = log->value(QLatin1String("report")).toObject();
        // Logs written since the task is stored once refer to session.json's; older ones embed it.
        if (reportJson.value(QLatin1String("task")).toObject().value(kTaskRefKey).toString() ==
            kTaskRef)
            reportJson.insert(QStringLiteral("task"), m_info.harnessTask.isEmpty()
                                                          ? m_info.task.toJson()
                                                          : m_info.harnessTask);
        auto report = EvaluationReport::fromJson(reportJson, &reportError);
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
    const auto data = readRegularFile(kernelPath(version), kMaxSourceFileBytes, error);
    if (!data)
        return std::nullopt;
    return QString::fromUtf8(*data);
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
