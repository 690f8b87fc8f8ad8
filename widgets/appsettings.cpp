#include "appsettings.h"

#include <QDir>
#include <QSettings>
#include <QFileInfo>
#include <QStandardPaths>
#include <QUrl>

namespace kev {

using namespace Qt::StringLiterals;

AppSettings AppSettings::load(QSettings& settings) {
    AppSettings s;
    s.llmPreset = settings.value(u"llm/preset"_s, s.llmPreset).toString();
    s.llmBaseUrl = settings.value(u"llm/baseUrl"_s).toString();
    s.llmModel = settings.value(u"llm/model"_s).toString();
    s.llmFallbackModel = settings.value(u"llm/fallbackModel"_s).toString();
    s.llmFirstTokenTimeoutS = settings.value(u"llm/firstTokenTimeoutS"_s, 0).toDouble();
    s.llmStallTimeoutS = settings.value(u"llm/stallTimeoutS"_s, 0).toDouble();
    s.llmMaxRetries = settings.value(u"llm/maxRetries"_s, -1).toInt();
    s.llmNumCtx = settings.value(u"llm/numCtx"_s, 0).toInt();
    s.llmKeepAlive = settings.value(u"llm/keepAlive"_s).toString();
    s.tokenBudget = settings.value(u"budget/tokens"_s, 0).toLongLong();
    s.costBudgetUsd = settings.value(u"budget/costUsd"_s, 0).toDouble();
    s.harnessCommands = settings.value(u"harness/commands"_s).toStringList();
    s.gpu = settings.value(u"harness/gpu"_s, 0).toInt();
    s.recentSessions = settings.value(u"sessions/recent"_s).toStringList();
    s.sessionsRoot = settings.value(u"sessions/root"_s, defaultSessionsRoot()).toString();
    s.knowledgePath = settings.value(u"knowledge/path"_s).toString();
    return s;
}

QString AppSettings::defaultSessionsRoot() {
    // ~/.local/share/kevolve/sessions: the generic data folder plus the program's name once
    // (AppLocalDataLocation would repeat it as organisation and application).
    return QDir(QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation))
        .filePath(u"kevolve/sessions"_s);
}

void AppSettings::save(QSettings& settings) const {
    settings.setValue(u"llm/preset"_s, llmPreset);
    settings.setValue(u"llm/baseUrl"_s, llmBaseUrl);
    settings.setValue(u"llm/model"_s, llmModel);
    settings.setValue(u"llm/fallbackModel"_s, llmFallbackModel);
    settings.setValue(u"llm/firstTokenTimeoutS"_s, llmFirstTokenTimeoutS);
    settings.setValue(u"llm/stallTimeoutS"_s, llmStallTimeoutS);
    settings.setValue(u"llm/maxRetries"_s, llmMaxRetries);
    settings.setValue(u"llm/numCtx"_s, llmNumCtx);
    settings.setValue(u"llm/keepAlive"_s, llmKeepAlive);
    settings.setValue(u"budget/tokens"_s, tokenBudget);
    settings.setValue(u"budget/costUsd"_s, costBudgetUsd);
    settings.setValue(u"harness/commands"_s, harnessCommands);
    settings.setValue(u"harness/gpu"_s, gpu);
    settings.setValue(u"sessions/recent"_s, recentSessions);
    settings.setValue(u"sessions/root"_s, sessionsRoot);
    settings.setValue(u"knowledge/path"_s, knowledgePath);
}

void AppSettings::addRecent(const QString& dir) {
    const QString path = QDir(dir).absolutePath();
    recentSessions.removeAll(path);
    recentSessions.prepend(path);
    while (recentSessions.size() > kMaxRecent)
        recentSessions.removeLast();
}

QStringList AppSettings::problems() const {
    QStringList problems;
    if (!llmBaseUrl.isEmpty()) {
        const QUrl url(llmBaseUrl, QUrl::StrictMode);
        if (!url.isValid() || (url.scheme() != u"http" && url.scheme() != u"https") ||
            url.host().isEmpty())
            problems << u"Base URL \"%1\" is not an http:// or https:// URL with a host"_s.arg(
                llmBaseUrl);
    }
    for (const QString& command : harnessCommands) {
        // The first word is the program (kevolve-harness, ssh, srun); what it runs remotely is
        // its business.
        const QString program = command.section(u' ', 0, 0, QString::SectionSkipEmpty);
        const bool found = program.contains(u'/')
                               ? QFileInfo(program).isExecutable()
                               : !QStandardPaths::findExecutable(program).isEmpty();
        if (!found)
            problems << u"Harness launcher \"%1\": the program \"%2\" is not found"_s.arg(command,
                                                                                          program);
    }
    return problems;
}

QString AppSettings::keyService() const {
    return llmPreset.isEmpty() ? u"custom"_s : llmPreset;
}

QJsonObject AppSettings::llmOptions() const {
    QJsonObject options{{u"preset"_s, keyService()}, {u"key_service"_s, keyService()}};
    if (!llmBaseUrl.isEmpty())
        options.insert(u"base_url"_s, llmBaseUrl);
    if (!llmModel.isEmpty())
        options.insert(u"model"_s, llmModel);
    if (!llmFallbackModel.isEmpty())
        options.insert(u"fallback_model"_s, llmFallbackModel);
    if (llmFirstTokenTimeoutS > 0)
        options.insert(u"first_token_timeout_s"_s, llmFirstTokenTimeoutS);
    if (llmStallTimeoutS > 0)
        options.insert(u"stall_timeout_s"_s, llmStallTimeoutS);
    if (llmMaxRetries >= 0)
        options.insert(u"max_retries"_s, llmMaxRetries);
    if (llmNumCtx > 0)
        options.insert(u"num_ctx"_s, llmNumCtx);
    if (!llmKeepAlive.isEmpty())
        options.insert(u"keep_alive"_s, llmKeepAlive);
    return options;
}

void AppSettings::applyTo(EngineSettings& settings) const {
    settings.harnessCommands = harnessCommands;
    // A device in the request overrides the launcher's own (serve --device N): only when set.
    if (gpu > 0)
        settings.evalOptions.insert(u"device"_s, gpu);
    settings.tokenBudget = tokenBudget;
    settings.costBudgetUsd = costBudgetUsd;
    const QJsonObject llm = llmOptions();
    if (settings.plannerBackend == u"llm")
        settings.plannerOptions = llm;
    if (settings.coderBackend == u"llm")
        settings.coderOptions = llm;
    if (settings.reviewerBackend == u"llm")
        settings.reviewerOptions = llm;
}

} // namespace kev
