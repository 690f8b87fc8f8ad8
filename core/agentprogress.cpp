#include "agentprogress.h"

using namespace Qt::Literals::StringLiterals;

namespace kev {

namespace {

QString secondsText(qint64 ms) {
    return QString::number(static_cast<double>(ms) / 1000.0, 'f', 1) + u" s"_s;
}

} // namespace

QString AgentProgress::stateName(State state) {
    switch (state) {
    case State::Sending:
        return u"sending"_s;
    case State::Waiting:
        return u"waiting for the first token"_s;
    case State::Streaming:
        return u"streaming"_s;
    case State::Retrying:
        return u"retrying"_s;
    case State::Done:
        return u"done"_s;
    case State::Failed:
        return u"failed"_s;
    }
    return {};
}

QString AgentProgress::line() const {
    QString text = role;
    if (!model.isEmpty())
        text += u' ' + model;
    text += u": "_s + stateName(state);
    if (state == State::Retrying)
        text += u" in %1%2"_s.arg(secondsText(waitMs),
                                  retryAfter ? u" (the server's Retry-After)"_s : QString());
    if (tokens > 0 || state == State::Streaming || state == State::Done)
        text +=
            u", %1%2 tokens"_s.arg(tokensEstimated ? u"~"_s : QString(), QString::number(tokens));
    text += u", "_s + secondsText(elapsedMs);
    if (maxAttempts > 1)
        text += u", attempt %1 of %2"_s.arg(QString::number(attempt), QString::number(maxAttempts));
    if (!detail.isEmpty() && (state == State::Retrying || state == State::Failed))
        text += u": "_s + detail;
    return text;
}

} // namespace kev
