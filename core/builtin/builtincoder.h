// The built-in Coding agent: instantiates the strategy's family template. It cannot repair a
// compile error in hand-written code (it writes code only from templates), so fixCompile fails
// with a message that sends the loop back to planning.
#ifndef KEV_BUILTIN_BUILTINCODER_H
#define KEV_BUILTIN_BUILTINCODER_H

#include "agents.h"

namespace kev {

class BuiltinCoder : public Coder {
    Q_OBJECT
public:
    explicit BuiltinCoder(QObject* parent = nullptr);

    void code(const kev::AgentContext& context, const kev::Strategy& strategy) override;
    void fixCompile(const kev::AgentContext& context, const kev::Strategy& strategy,
                    const QString& source, const QString& compileLog) override;
    void cancel() override;

private:
    void finish(const QString& source, const AgentTurn& turn, const QString& error);
    quint64 m_request = 0;
};

} // namespace kev

#endif // KEV_BUILTIN_BUILTINCODER_H
