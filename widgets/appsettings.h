// What the workbench remembers between runs (QSettings): the LLM endpoint and model, the harness
// launcher, the GPU, and the recent sessions. Never a key: keys live in the keyring.
#pragma once

#include "core/enginesettings.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

class QSettings;

namespace kev {

struct AppSettings {
    // An id of kev::ProviderPreset ("openai", "vllm", "ollama", ...) or "custom".
    QString llmPreset = QStringLiteral("openai");
    QString llmBaseUrl;
    QString llmModel;
    // The model's call options and the session budgets (llm/llmsettings.h); 0 or empty = the
    // default.
    QString llmFallbackModel;
    double llmFirstTokenTimeoutS = 0;
    double llmStallTimeoutS = 0;
    int llmMaxRetries = -1;
    int llmNumCtx = 0;
    QString llmKeepAlive;
    qint64 tokenBudget = 0;
    double costBudgetUsd = 0;
    // One `kevolve-harness serve` command per worker; empty = the one next to the executable.
    QStringList harnessCommands;
    int gpu = 0;
    QStringList recentSessions;
    QString sessionsRoot;
    // The knowledge store (KnowledgeStore::resolvePath): empty = $KEVOLVE_KNOWLEDGE, else the
    // default in the user's data folder; "off" = none.
    QString knowledgePath;

    static constexpr int kMaxRecent = 10;

    static AppSettings load(QSettings& settings);
    // Where new sessions go unless the settings say otherwise: ~/.local/share/kevolve/sessions.
    static QString defaultSessionsRoot();
    void save(QSettings& settings) const;
    void addRecent(const QString& dir);
    // What is wrong, each naming its field: a base URL that is not http(s), a harness launcher
    // whose program is not found. Empty = nothing found wrong.
    QStringList problems() const;

    // The keyring service of the LLM key: the preset's id.
    QString keyService() const;
    // Options for an "llm" role (llm/llmsettings.h): preset, base_url, model, key_service.
    QJsonObject llmOptions() const;
    // Applies the launcher, GPU and budgets to engine settings, and llmOptions() to every "llm"
    // role.
    void applyTo(EngineSettings& settings) const;
};

} // namespace kev
