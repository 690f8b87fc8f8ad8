// Replies of a well-behaved model playing Kevolve's three roles, for loops run against the test
// server: the role is read from the system prompt, the planner answers a valid strategy, the coder
// a kernel file whose "// fake:" line tells kev-fake-harness which report to return (a speed-up
// that grows with every version), and the reviewer valid feedback.
#ifndef KEV_TESTS_KEVOLVERESPONDER_H
#define KEV_TESTS_KEVOLVERESPONDER_H

#include "fakechatserver.h"

#include <QJsonObject>

#include <functional>

namespace kev::test {

// A responder for FakeChatServer::setResponder; it counts the coder's versions itself.
std::function<ScriptedReply(const QJsonObject& request)> kevolveResponder();

// "planner", "coder", "reviewer" or "" from a request's system message.
QString roleOf(const QJsonObject& request);

} // namespace kev::test

#endif // KEV_TESTS_KEVOLVERESPONDER_H
