#include "agents.h"

#include <QHash>
#include <QMutex>
#include <QMutexLocker>

namespace kev {

namespace {

struct Backend {
    AgentFactory::PlannerMaker planner;
    AgentFactory::CoderMaker coder;
    AgentFactory::ReviewerMaker reviewer;
    QString description;
};

struct Registry {
    QMutex mutex;
    QHash<QString, Backend> backends;
};

// Function-local so that registrations from static objects in other files find it constructed.
Registry& registry() {
    static Registry instance;
    return instance;
}

std::optional<Backend> lookup(const AgentSettings& settings, QString* error) {
    Registry& r = registry();
    QMutexLocker lock(&r.mutex);
    const auto it = r.backends.constFind(settings.backend);
    if (it == r.backends.constEnd()) {
        if (error) {
            QStringList known = r.backends.keys();
            known.sort();
            *error = QStringLiteral("agent backend \"") + settings.backend +
                     QStringLiteral("\" for the ") + settings.role +
                     QStringLiteral(" is not available in this build (available: ") +
                     (known.isEmpty() ? QStringLiteral("none") : known.join(QStringLiteral(", "))) +
                     u')';
        }
        return std::nullopt;
    }
    return *it;
}

template <typename Agent, typename Maker>
Agent* make(const Maker& maker, const AgentSettings& settings, QString* error) {
    Agent* agent = maker ? maker(settings) : nullptr;
    if (!agent && error)
        *error = QStringLiteral("agent backend \"") + settings.backend +
                 QStringLiteral("\" cannot play the ") + settings.role;
    return agent;
}

} // namespace

void AgentFactory::registerBackend(const QString& name, PlannerMaker planner, CoderMaker coder,
                                   ReviewerMaker reviewer, const QString& description) {
    Registry& r = registry();
    QMutexLocker lock(&r.mutex);
    r.backends.insert(
        name, Backend{std::move(planner), std::move(coder), std::move(reviewer), description});
}

QStringList AgentFactory::backends() {
    Registry& r = registry();
    QMutexLocker lock(&r.mutex);
    QStringList names = r.backends.keys();
    names.sort();
    return names;
}

bool AgentFactory::hasBackend(const QString& name) {
    Registry& r = registry();
    QMutexLocker lock(&r.mutex);
    return r.backends.contains(name);
}

QString AgentFactory::description(const QString& name) {
    Registry& r = registry();
    QMutexLocker lock(&r.mutex);
    return r.backends.value(name).description;
}

Planner* AgentFactory::createPlanner(const AgentSettings& settings, QString* error) {
    const auto backend = lookup(settings, error);
    return backend ? make<Planner>(backend->planner, settings, error) : nullptr;
}

Coder* AgentFactory::createCoder(const AgentSettings& settings, QString* error) {
    const auto backend = lookup(settings, error);
    return backend ? make<Coder>(backend->coder, settings, error) : nullptr;
}

Reviewer* AgentFactory::createReviewer(const AgentSettings& settings, QString* error) {
    const auto backend = lookup(settings, error);
    return backend ? make<Reviewer>(backend->reviewer, settings, error) : nullptr;
}

AgentBackendRegistration::AgentBackendRegistration(const QString& name,
                                                   AgentFactory::PlannerMaker planner,
                                                   AgentFactory::CoderMaker coder,
                                                   AgentFactory::ReviewerMaker reviewer,
                                                   const QString& description) {
    AgentFactory::registerBackend(name, std::move(planner), std::move(coder), std::move(reviewer),
                                  description);
}

} // namespace kev
