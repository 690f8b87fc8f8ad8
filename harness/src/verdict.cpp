#include "verdict.h"

#include "report.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace kev::verdict {

namespace {

bool okStatus(const std::string& s) {
    return s == "ok" || s == "unstable";
}

void appendAll(json::Value& into, const char* key, const json::Value* from) {
    if (!from || !from->isArray() || from->size() == 0) {
        return;
    }
    json::Value& list = into[key];
    if (!list.isArray()) {
        list = json::Value::array();
    }
    for (size_t i = 0; i < from->size(); ++i) {
        list.push(from->at(i));
    }
}

Outcome violation(json::Value child, const std::string& evidence, const std::string& message) {
    Outcome o;
    o.status = "rule_violation";
    o.message = message;
    if (!child.isObject()) {
        child = json::Value::object();
    }
    json::Value one = json::Value::array();
    one.push(evidence);
    appendAll(child, "violations", &one);
    o.child = std::move(child);
    return o;
}

bool endedBadly(const process::Result& run) {
    return run.started && (run.timedOut || !run.exited || run.exitCode != 0);
}

} // namespace

Outcome combine(const ChildLines& verifier, const process::Result& verifierRun,
                const ChildLines& runner, const process::Result& runnerRun, double timeoutS) {
    // Only the harness writes on these channels; anything else is the candidate's doing.
    if (runner.forged > 0) {
        return violation(json::Value::object(),
                         "the runner's result channel carried " + std::to_string(runner.forged) +
                             " result line(s) without the runner's token (written by the "
                             "candidate)",
                         "rule violation: a forged result on the runner's result channel");
    }
    if (runner.results > 1) {
        return violation(json::Value::object(),
                         "the runner's result channel carried " + std::to_string(runner.results) +
                             " results (something wrote to it)",
                         "rule violation: more than one result on the runner's result channel");
    }
    if (verifier.forged > 0) {
        return violation(json::Value::object(),
                         "the verifier's result channel carried " +
                             std::to_string(verifier.forged) +
                             " result line(s) without the verifier's token",
                         "rule violation: a forged result on the verifier's result channel");
    }
    if (verifier.results > 1) {
        return violation(json::Value::object(),
                         "the verifier's result channel carried " +
                             std::to_string(verifier.forged + verifier.results) +
                             " result lines where one was due",
                         "rule violation: more than one result on the verifier's result channel");
    }
    const json::Value* status =
        verifier.result.isObject() ? verifier.result.find("status") : nullptr;
    if (!status || !status->isString() || !report::isStatus(status->asString())) {
        // No verdict: the verifier's own failure is the report's (a time-out above all).
        const report::ChildFailure f = report::childFailure(verifierRun, timeoutS);
        Outcome o;
        o.status = f.status;
        o.message = f.message;
        o.child = verifier.result.isObject() ? verifier.result : json::Value::object();
        if (!f.violation.empty()) {
            json::Value one = json::Value::array();
            one.push(f.violation);
            appendAll(o.child, "violations", &one);
        }
        o.child["error"] = f.error;
        return o;
    }
    Outcome o;
    o.child = verifier.result;
    o.child.erase("role");
    o.status = status->asString();
    const json::Value* message = o.child.find("message");
    o.message = message && message->isString() ? message->asString() : std::string();

    // The runner's own observations: checks, resources and audit for the report; its violations
    // against itself are believed (a candidate gains nothing by reporting one).
    if (runner.result.isObject()) {
        // The runner's checks (sandbox, launch audit) first, then the verifier's.
        json::Value merged = json::Value::object();
        appendAll(merged, "checks", runner.result.find("checks"));
        appendAll(merged, "checks", o.child.find("checks"));
        if (const json::Value* c = merged.find("checks")) {
            o.child["checks"] = *c;
        }
        for (const char* key : {"resources", "audit"}) {
            if (const json::Value* v = runner.result.find(key)) {
                o.child[key] = *v;
            }
        }
        // A violation the runner saw of itself (a launch after kevolve_launch returned, on another
        // stream) explains whatever else went wrong: it takes precedence over every status.
        const json::Value* violations = runner.result.find("violations");
        if (violations && violations->isArray() && violations->size() > 0) {
            appendAll(o.child, "violations", violations);
            if (o.status != "rule_violation") {
                o.status = "rule_violation";
                const json::Value& first = violations->at(0);
                o.message = first.isString() ? first.asString() : first.dump();
            }
        }
    } else if (okStatus(o.status)) {
        o.status = "runtime_error";
        o.message = "the runner ended without its own report (its result line is missing)";
    }

    // A runner that died (the sandbox's SIGSYS above all) explains the verifier's runtime error or
    // time-out better than "the runner ended".
    if (!okStatus(o.status) && endedBadly(runnerRun) &&
        (o.status == "runtime_error" || o.status == "timeout")) {
        const report::ChildFailure f = report::childFailure(runnerRun, timeoutS);
        if (f.status == "rule_violation") {
            o.status = f.status;
            o.message = f.message;
            json::Value one = json::Value::array();
            one.push(f.violation);
            appendAll(o.child, "violations", &one);
        }
        json::Value error = f.error;
        if (const json::Value* mine = o.child.find("error"); mine && mine->isObject()) {
            if (const json::Value* m = mine->find("message")) {
                error["verifier_message"] = *m;
            }
        }
        error["process"] = "runner";
        o.child["error"] = std::move(error);
    }
    return o;
}

bool makePipe(int fds[2], std::string* error) {
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        if (error) {
            *error = std::string("pipe: ") + std::strerror(errno);
        }
        return false;
    }
    // Above the descriptors a child's standard streams and result channel are dup2'd onto (0-3),
    // so that an inherited end is never overwritten by them.
    for (int i = 0; i < 2; ++i) {
        const int lifted = ::fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
        if (lifted < 0) {
            if (error) {
                *error = std::string("fcntl: ") + std::strerror(errno);
            }
            ::close(fds[0]);
            ::close(fds[1]);
            return false;
        }
        ::close(fds[i]);
        fds[i] = lifted;
    }
    return true;
}

bool setInheritable(int fd, bool inheritable) {
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags < 0) {
        return false;
    }
    const int want = inheritable ? (flags & ~FD_CLOEXEC) : (flags | FD_CLOEXEC);
    return ::fcntl(fd, F_SETFD, want) == 0;
}

} // namespace kev::verdict
