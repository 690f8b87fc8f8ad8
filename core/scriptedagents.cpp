#include "scriptedagents.h"

#include "jsonschema.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QTimer>

namespace kev {

namespace {

Strategy defaultPlan(int call) {
    Strategy s;
    s.family = QStringLiteral("fma_tiled");
    s.blockM = 64;
    s.blockN = 64;
    s.blockK = 16;
    s.warps = 8;
    s.warpM = 32;
    s.warpN = 16;
    s.mma = QStringLiteral("fma");
    s.vectorWidth = 4;
    s.stages = call % 2 == 0 ? 1 : 2;
    s.smemLayout = QStringLiteral("padded");
    s.smemPaddingBytes = 16;
    s.rationale = QStringLiteral("scripted plan ") + QString::number(call + 1);
    return s;
}

QString defaultSource() {
    return QStringLiteral(
        "// fake: ok speedup=0.5\n// step of iteration {iteration}, beam {beam}: the engine never "
        "measures one kernel twice\n#include <kevolve/abi.h>\n"
        "extern \"C\" int kevolve_launch(const KevolveArgs*, cudaStream_t) { return 0; }\n");
}

template <typename T>
T pick(const QJsonArray& list, int call, const T& fallback, T (*convert)(const QJsonValue&)) {
    if (list.isEmpty())
        return fallback;
    return convert(list.at(std::min<qsizetype>(call, list.size() - 1)));
}

QString toText(const QJsonValue& v) {
    return v.toString();
}

// Shared by the three roles: the delay, the scripted failure, and the streamed text.
class ScriptedBehaviour {
public:
    explicit ScriptedBehaviour(const AgentSettings& settings)
        : m_options(scriptedAgentOptions(settings))
        , m_role(settings.role) {}

    const QJsonObject& options() const { return m_options; }
    int nextCall() { return m_calls++; }
    bool failsAt(int call) const {
        return m_options.value(QLatin1String("fail_") + m_role + QLatin1String("_at")).toInt(0) ==
               call + 1;
    }
    int delayMs() const { return m_options.value(QLatin1String("delay_ms")).toInt(0); }
    qint64 tokens() const { return m_options.value(QLatin1String("tokens")).toInteger(0); }

    AgentTurn turn(const QString& prompt, const QString& reply) const {
        AgentTurn t;
        t.role = m_role;
        t.backend = QStringLiteral("scripted");
        t.prompt = prompt;
        t.reply = reply;
        t.tokensIn = tokens();
        t.tokensOut = tokens();
        return t;
    }

private:
    QJsonObject m_options;
    QString m_role;
    int m_calls = 0;
};

// Runs `deliver` after the scripted delay unless the agent was cancelled in between.
void later(QObject* agent, int* generation, int delayMs, std::function<void()> deliver) {
    const int expected = *generation;
    QPointer<QObject> guard(agent);
    QTimer::singleShot(delayMs, agent, [guard, generation, expected, deliver = std::move(deliver)] {
        if (guard && *generation == expected)
            deliver();
    });
}

class ScriptedPlanner : public Planner {
public:
    explicit ScriptedPlanner(const AgentSettings& settings)
        : m_behaviour(settings) {}

    void plan(const AgentContext& context) override {
        const int call = m_behaviour.nextCall();
        const bool fails = m_behaviour.failsAt(call);
        const QJsonArray plans = m_behaviour.options().value(QLatin1String("plans")).toArray();
        Strategy strategy = defaultPlan(call);
        QString error;
        if (!plans.isEmpty()) {
            const auto parsed = Strategy::fromJson(
                plans.at(std::min<qsizetype>(call, plans.size() - 1)).toObject(), &error);
            if (parsed)
                strategy = *parsed;
        }
        const QString prompt =
            QStringLiteral("plan ") + context.task.name + QStringLiteral(" iteration ") +
            QString::number(context.iteration) + QStringLiteral(" beam ") +
            QString::number(context.beamIndex) +
            (context.humanNote.isEmpty() ? QString()
                                         : QStringLiteral(" note: ") + context.humanNote);
        later(this, &m_generation, m_behaviour.delayMs(), [this, fails, strategy, prompt, error] {
            if (fails || !error.isEmpty()) {
                emit planFailed(fails ? QStringLiteral("scripted planner failure") : error);
                return;
            }
            emit textAvailable(strategy.rationale);
            emit planAvailable(strategy, m_behaviour.turn(prompt, strategy.toText()));
        });
    }

    void cancel() override { ++m_generation; }

private:
    ScriptedBehaviour m_behaviour;
    int m_generation = 0;
};

class ScriptedCoder : public Coder {
public:
    explicit ScriptedCoder(const AgentSettings& settings)
        : m_behaviour(settings) {}

    void code(const AgentContext& context, const Strategy& strategy) override {
        m_attempt = 1;
        answer(context, QStringLiteral("code ") + strategy.summary());
    }

    void fixCompile(const AgentContext& context, const Strategy& strategy, const QString&,
                    const QString& compileLog) override {
        ++m_attempt;
        answer(context,
               QStringLiteral("fix ") + strategy.summary() + QStringLiteral("\n") + compileLog);
    }

    void cancel() override { ++m_generation; }

private:
    void answer(const AgentContext& context, const QString& prompt) {
        const int call = m_behaviour.nextCall();
        const bool fails = m_behaviour.failsAt(call);
        const QString fullPrompt =
            context.humanNote.isEmpty()
                ? prompt
                : prompt + QStringLiteral("\nperson's note: ") + context.humanNote;
        QJsonArray sources = m_behaviour.options().value(QLatin1String("sources")).toArray();
        const QJsonArray beams =
            m_behaviour.options().value(QLatin1String("beam_sources")).toArray();
        if (!beams.isEmpty())
            sources = beams.at(std::min<qsizetype>(context.beamIndex, beams.size() - 1)).toArray();
        QString source = pick<QString>(sources, call, defaultSource(), toText);
        source.replace(QStringLiteral("{iteration}"), QString::number(context.iteration));
        source.replace(QStringLiteral("{beam}"), QString::number(context.beamIndex));
        source.replace(QStringLiteral("{attempt}"), QString::number(m_attempt));
        later(this, &m_generation, m_behaviour.delayMs(), [this, fails, source, fullPrompt] {
            if (fails) {
                emit codeFailed(QStringLiteral("scripted coder failure"));
                return;
            }
            emit textAvailable(source.left(40));
            emit codeAvailable(source, m_behaviour.turn(fullPrompt, source));
        });
    }

    ScriptedBehaviour m_behaviour;
    int m_generation = 0;
    int m_attempt = 1;
};

class ScriptedReviewer : public Reviewer {
public:
    explicit ScriptedReviewer(const AgentSettings& settings)
        : m_behaviour(settings) {}

    void review(const AgentContext&, const Strategy&, const QString&,
                const EvaluationReport& report) override {
        const int call = m_behaviour.nextCall();
        const bool fails = m_behaviour.failsAt(call);
        ReviewFeedback f;
        f.compileOk = report.compileOk;
        f.correct = report.status == EvaluationReport::Status::Ok;
        f.status = EvaluationReport::statusToString(report.status);
        if (report.timed) {
            f.timeMs = report.medianMs;
            f.referenceMs = report.referenceMs;
            f.speedup = report.speedup;
        }
        f.percentOfFloor = report.percentOfFloor;
        f.bottleneckId = f.correct ? QStringLiteral("latency_bound") : f.status;
        f.bottleneckText = report.message;
        f.suggestions = {QStringLiteral("scripted suggestion ") + QString::number(call + 1)};
        const QJsonArray blames = m_behaviour.options().value(QLatin1String("blames")).toArray();
        f.blame = pick<QString>(
            blames, call, f.correct ? QStringLiteral("none") : QStringLiteral("implementation"),
            toText);
        f.evidence = QJsonObject{{QStringLiteral("status"), f.status}};
        const QString prompt = QStringLiteral("review ") + report.message;
        later(this, &m_generation, m_behaviour.delayMs(), [this, fails, f, prompt] {
            if (fails) {
                emit reviewFailed(QStringLiteral("scripted reviewer failure"));
                return;
            }
            emit reviewAvailable(
                f, m_behaviour.turn(prompt, QString::fromUtf8(QJsonDocument(f.toJson()).toJson())));
        });
    }

    void cancel() override { ++m_generation; }

private:
    ScriptedBehaviour m_behaviour;
    int m_generation = 0;
};

const AgentBackendRegistration registration(
    QStringLiteral("scripted"),
    [](const AgentSettings& s) -> Planner* { return new ScriptedPlanner(s); },
    [](const AgentSettings& s) -> Coder* { return new ScriptedCoder(s); },
    [](const AgentSettings& s) -> Reviewer* { return new ScriptedReviewer(s); },
    QStringLiteral("deterministic agents for tests (options or $KEVOLVE_SCRIPTED_AGENTS)"));

} // namespace

QJsonObject scriptedAgentOptions(const AgentSettings& settings) {
    QString path = settings.options.value(QLatin1String("script")).toString();
    if (path.isEmpty() && settings.options.isEmpty())
        path = qEnvironmentVariable("KEVOLVE_SCRIPTED_AGENTS");
    if (path.isEmpty())
        return settings.options;
    QString error;
    auto loaded = readJsonObjectFile(path, &error);
    if (!loaded) {
        qWarning("scripted agents: %s", qPrintable(error));
        return settings.options;
    }
    return *loaded;
}

} // namespace kev
