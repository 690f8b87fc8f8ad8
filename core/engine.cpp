#include "engine.h"

#include "enginerun.h"
#include "keystore.h"
#include "metatypes.h"

#include <QMetaEnum>

namespace kev {

Engine::Engine(QObject* parent)
    : QObject(parent) {
    registerMetaTypes();
    m_thread.setObjectName(QStringLiteral("kevolve-engine"));
    m_run = new EngineRun;
    m_run->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_run, &QObject::deleteLater);

    connect(m_run, &EngineRun::stateChanged, this,
            [this](Engine::State state, const QString& detail) {
                m_state = state;
                emit stateChanged(state, detail);
            });
    connect(m_run, &EngineRun::sessionOpened, this, &Engine::sessionOpened);
    connect(m_run, &EngineRun::devicesAvailable, this, &Engine::devicesAvailable);
    connect(m_run, &EngineRun::planAvailable, this, &Engine::planAvailable);
    connect(m_run, &EngineRun::codeAvailable, this, &Engine::codeAvailable);
    connect(m_run, &EngineRun::reportAvailable, this, &Engine::reportAvailable);
    connect(m_run, &EngineRun::reviewAvailable, this, &Engine::reviewAvailable);
    connect(m_run, &EngineRun::gateRequested, this, &Engine::gateRequested);
    connect(m_run, &EngineRun::stepAvailable, this, &Engine::stepAvailable);
    connect(m_run, &EngineRun::iterationFinished, this, &Engine::iterationFinished);
    connect(m_run, &EngineRun::agentTextAvailable, this, &Engine::agentTextAvailable);
    connect(m_run, &EngineRun::agentProgressAvailable, this, &Engine::agentProgressAvailable);
    connect(m_run, &EngineRun::progressAvailable, this, &Engine::progressAvailable);
    connect(m_run, &EngineRun::finished, this, &Engine::finished);
    connect(m_run, &EngineRun::failed, this, &Engine::failed);
    m_thread.start();
}

Engine::~Engine() {
    // The run's agents and harness workers belong to the worker thread: stop them there, then let
    // the thread delete the run as it ends.
    if (m_thread.isRunning()) {
        QMetaObject::invokeMethod(
            m_run, [run = m_run] { run->cancel(); }, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }
}

void Engine::post(std::function<void(EngineRun*)> command) {
    QMetaObject::invokeMethod(
        m_run, [run = m_run, command = std::move(command)] { command(run); }, Qt::QueuedConnection);
}

void Engine::setKeyStore(std::shared_ptr<KeyStore> keyStore) {
    post([keyStore = std::move(keyStore)](EngineRun* run) { run->setKeyStore(keyStore); });
}

void Engine::setKnowledgePath(const QString& path) {
    post([path](EngineRun* run) { run->setKnowledgePath(path); });
}

void Engine::start(const Task& task, const EngineSettings& settings, const QString& sessionDir) {
    m_state = State::Starting;
    post([task, settings, sessionDir](EngineRun* run) { run->start(task, settings, sessionDir); });
}

void Engine::resume(const QString& sessionDir, const std::optional<EngineSettings>& settings) {
    m_state = State::Starting;
    post([sessionDir, settings](EngineRun* run) { run->resume(sessionDir, settings); });
}

void Engine::approve(int version) {
    post([version](EngineRun* run) { run->approve(version); });
}

void Engine::reject(int version, const QString& reason) {
    post([version, reason](EngineRun* run) { run->reject(version, reason); });
}

void Engine::submitCode(int version, const QString& source) {
    post([version, source](EngineRun* run) { run->submitCode(version, source); });
}

void Engine::submitPlan(int version, const Strategy& strategy) {
    post([version, strategy](EngineRun* run) { run->submitPlan(version, strategy); });
}

void Engine::stop() {
    post([](EngineRun* run) { run->stop(); });
}

void Engine::cancel() {
    post([](EngineRun* run) { run->cancel(); });
}

bool Engine::isRunning() const {
    return m_state != State::Idle && m_state != State::Finished && m_state != State::Failed;
}

QString Engine::stateName(State state) {
    return QString::fromLatin1(QMetaEnum::fromType<State>().valueToKey(static_cast<int>(state)));
}

QString Engine::stopReasonName(StopReason reason) {
    return QString::fromLatin1(
        QMetaEnum::fromType<StopReason>().valueToKey(static_cast<int>(reason)));
}

QString Engine::failureName(Failure failure) {
    return QString::fromLatin1(
        QMetaEnum::fromType<Failure>().valueToKey(static_cast<int>(failure)));
}

} // namespace kev
