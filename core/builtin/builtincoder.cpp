#include "builtin/builtincoder.h"

#include "builtin/kernelfamily.h"

#include <QMetaObject>

using namespace Qt::StringLiterals;

namespace kev {

BuiltinCoder::BuiltinCoder(QObject* parent)
    : Coder(parent) {}

void BuiltinCoder::code(const AgentContext& context, const Strategy& strategy) {
    AgentTurn turn;
    turn.role = u"coder"_s;
    turn.backend = u"builtin"_s;
    turn.prompt = strategy.toText();
    const KernelFamily* family = FamilyRegistry::instance().find(strategy.family);
    if (!family) {
        QStringList known;
        const auto families = FamilyRegistry::instance().families();
        for (const KernelFamily* f : families)
            known << f->id();
        finish({}, turn,
               u"the built-in coder has no template for family \"%1\" (it has: %2)"_s.arg(
                   strategy.family, known.join(u", "_s)));
        return;
    }
    const QStringList problems = family->constraints(strategy, context.task, context.device);
    if (!problems.isEmpty()) {
        finish({}, turn,
               u"strategy %1 is not feasible for task %2 on %3: %4"_s.arg(
                   strategy.summary(), context.task.name, context.device.name,
                   problems.join(u"; "_s)));
        return;
    }
    const QString source = family->generate(strategy, context.task);
    turn.reply =
        u"instantiated the %1 template (%2 lines)"_s.arg(family->id()).arg(source.count(u'\n'));
    finish(source, turn, {});
}

void BuiltinCoder::fixCompile(const AgentContext&, const Strategy& strategy, const QString&,
                              const QString& compileLog) {
    AgentTurn turn;
    turn.role = u"coder"_s;
    turn.backend = u"builtin"_s;
    turn.prompt = u"fix the compile error of %1"_s.arg(strategy.summary());
    const QString firstLine = compileLog.section(u'\n', 0, 0).trimmed();
    finish({}, turn,
           u"the built-in coder writes kernels only from templates and cannot repair a compile "
           "error (%1); plan another configuration"_s.arg(firstLine.isEmpty() ? u"no log"_s
                                                                              : firstLine));
}

void BuiltinCoder::cancel() {
    ++m_request;
}

void BuiltinCoder::finish(const QString& source, const AgentTurn& turn, const QString& error) {
    const quint64 request = ++m_request;
    QMetaObject::invokeMethod(
        this,
        [this, request, source, turn, error] {
            if (request != m_request)
                return;
            if (error.isEmpty()) {
                emit textAvailable(turn.reply);
                emit codeAvailable(source, turn);
            } else {
                emit codeFailed(error);
            }
        },
        Qt::QueuedConnection);
}

} // namespace kev
