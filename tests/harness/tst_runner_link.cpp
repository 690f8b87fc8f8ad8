// The verifier's side of the runner protocol without a GPU: the strict reply parser, the link
// against stand-in runner processes that misbehave (exit early, forge, flood, hang), the timing
// plausibility rule, and how the supervisor combines the two children's lines into one verdict.
#include "runner_link.h"
#include "verdict.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

using kev::link::implausibleTiming;
using kev::link::LinkFailure;
using kev::link::parseReply;
using kev::link::Reply;
using kev::link::RunnerLink;
using kev::link::TimingClaim;

namespace {

void writeText(int fd, const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n <= 0) {
            return;
        }
        done += static_cast<size_t>(n);
    }
}

// Reads one command line from fd (the stand-in runner's side).
std::string readCommand(int fd) {
    std::string line;
    char c;
    while (::read(fd, &c, 1) == 1 && c != '\n') {
        line.push_back(c);
    }
    return line;
}

// A stand-in runner: a real process on the other end of two pipes, doing `behave(in, out)`.
class StandIn {
public:
    explicit StandIn(const std::function<void(int in, int out)>& behave) {
        // As in the verifier: a runner that is gone must not kill the reader with SIGPIPE.
        ::signal(SIGPIPE, SIG_IGN);
        int toRunner[2], toVerifier[2];
        EXPECT_EQ(::pipe(toRunner), 0);
        EXPECT_EQ(::pipe(toVerifier), 0);
        m_pid = ::fork();
        if (m_pid == 0) {
            ::close(toRunner[1]);
            ::close(toVerifier[0]);
            behave(toRunner[0], toVerifier[1]);
            ::_exit(0);
        }
        ::close(toRunner[0]);
        ::close(toVerifier[1]);
        m_in = toVerifier[0];
        m_out = toRunner[1];
    }
    ~StandIn() {
        ::close(m_in);
        ::close(m_out);
        ::kill(m_pid, SIGKILL);
        int status = 0;
        ::waitpid(m_pid, &status, 0);
    }
    int in() const { return m_in; }
    int out() const { return m_out; }

private:
    pid_t m_pid = -1;
    int m_in = -1, m_out = -1;
};

std::optional<Reply> callOnce(const std::function<void(int, int)>& behave, Reply::Kind expected,
                              LinkFailure* failure, double timeoutS = 5.0) {
    StandIn runner(behave);
    RunnerLink link(runner.in(), runner.out());
    return link.call("call 00ff", expected, timeoutS, failure);
}

} // namespace

TEST(RunnerReply, AcceptsExactlyTheProtocol) {
    std::string error;
    auto r = parseReply("done 3", &error);
    ASSERT_TRUE(r) << error;
    EXPECT_EQ(r->kind, Reply::Kind::Done);
    EXPECT_EQ(r->count, 3u);
    r = parseReply("sample 0.2145", &error);
    ASSERT_TRUE(r) << error;
    EXPECT_DOUBLE_EQ(r->ms, 0.2145);
    r = parseReply("sample 1.5e-3", &error);
    ASSERT_TRUE(r) << error;
    EXPECT_DOUBLE_EQ(r->ms, 1.5e-3);
    r = parseReply("fail runtime_error sticky an illegal memory access", &error);
    ASSERT_TRUE(r) << error;
    EXPECT_EQ(r->status, "runtime_error");
    EXPECT_TRUE(r->sticky);
    EXPECT_EQ(r->message, "an illegal memory access");
    for (const char* ok : {"ready", "unmapped", "bye", "mapped 17", "workspace 0"}) {
        EXPECT_TRUE(parseReply(ok, &error)) << ok << ": " << error;
    }
}

TEST(RunnerReply, RejectsEverythingElse) {
    for (const char* bad : {"",
                            "ok",
                            "done",
                            "done -1",
                            "done 01",
                            "done 3 4",
                            "done 3.5",
                            "done 99999999999999999999",
                            "sample",
                            "sample -0.1",
                            "sample nan",
                            "sample inf",
                            "sample 1e400",
                            "sample 0x10",
                            "sample +1",
                            "sample 1 2",
                            "ready now",
                            "bye ",
                            "fail ok - forged",
                            "fail timeout",
                            "fail timeout maybe message",
                            "DONE 3",
                            " done 3",
                            "done 3\r"}) {
        std::string error;
        EXPECT_FALSE(parseReply(bad, &error)) << "accepted '" << bad << "'";
        EXPECT_FALSE(error.empty()) << bad;
    }
    std::string error;
    EXPECT_FALSE(parseReply(std::string("done \x01"), &error));
    EXPECT_FALSE(
        parseReply("fail runtime_error - " + std::string(kev::link::kMaxLine, 'x'), &error));
    EXPECT_NE(error.find("bytes"), std::string::npos) << error;
}

TEST(RunnerReply, FormatRoundTrips) {
    Reply r;
    r.kind = Reply::Kind::Sample;
    r.ms = 0.123456789;
    auto back = parseReply(kev::link::formatReply(r), nullptr);
    ASSERT_TRUE(back);
    EXPECT_NEAR(back->ms, r.ms, 1e-12);
    Reply f;
    f.kind = Reply::Kind::Fail;
    f.status = "timeout";
    f.message = "the candidate did not finish\nwithin 10 s";
    back = parseReply(kev::link::formatReply(f), nullptr);
    ASSERT_TRUE(back) << kev::link::formatReply(f);
    EXPECT_EQ(back->status, "timeout");
    EXPECT_FALSE(back->sticky);
}

TEST(RunnerReply, HexCarriesBytesExactly) {
    const unsigned char bytes[] = {0, 1, 0x7f, 0x80, 0xff, 0x10};
    const std::string hex = kev::link::toHex(bytes, sizeof bytes);
    EXPECT_EQ(hex, "00017f80ff10");
    unsigned char back[sizeof bytes] = {};
    ASSERT_TRUE(kev::link::fromHex(hex, back, sizeof back));
    EXPECT_EQ(std::memcmp(bytes, back, sizeof bytes), 0);
    EXPECT_FALSE(kev::link::fromHex("00017f80ff1", back, sizeof back));
    EXPECT_FALSE(kev::link::fromHex("00017f80ff1g", back, sizeof back));
    EXPECT_FALSE(kev::link::fromHex("00017F80FF10", back, sizeof back));
}

TEST(RunnerLink, AWellBehavedRunnerAnswers) {
    LinkFailure failure;
    auto r = callOnce(
        [](int in, int out) {
            if (readCommand(in) == "call 00ff") {
                writeText(out, "done 3\n");
            }
            readCommand(in); // until the verifier closes
        },
        Reply::Kind::Done, &failure);
    ASSERT_TRUE(r) << failure.message;
    EXPECT_EQ(r->count, 3u);
}

TEST(RunnerLink, ARunnerThatExitsIsARuntimeError) {
    LinkFailure failure;
    EXPECT_FALSE(callOnce([](int, int) { ::_exit(0); }, Reply::Kind::Done, &failure));
    EXPECT_EQ(failure.status, "runtime_error");
    EXPECT_NE(failure.message.find("ended during 'call'"), std::string::npos) << failure.message;
}

TEST(RunnerLink, AnotherKindOfReplyIsAViolation) {
    LinkFailure failure;
    EXPECT_FALSE(callOnce(
        [](int in, int out) {
            readCommand(in);
            writeText(out, "sample 0.0001\n");
            readCommand(in);
        },
        Reply::Kind::Done, &failure));
    EXPECT_EQ(failure.status, "rule_violation");
    EXPECT_NE(failure.message.find("'sample' where 'done' was due"), std::string::npos)
        << failure.message;
}

TEST(RunnerLink, AForgedLineNextToTheRealOneIsAViolation) {
    LinkFailure failure;
    EXPECT_FALSE(callOnce(
        [](int in, int out) {
            readCommand(in);
            writeText(out, "sample 0.0001\nsample 0.5\n");
            readCommand(in);
        },
        Reply::Kind::Sample, &failure));
    EXPECT_EQ(failure.status, "rule_violation");
    EXPECT_NE(failure.message.find("more than one line"), std::string::npos) << failure.message;
}

TEST(RunnerLink, AnUnsolicitedLineIsAViolation) {
    StandIn runner([](int in, int out) {
        writeText(out, "done 1\n");
        readCommand(in);
        readCommand(in);
    });
    pollfd ready{runner.in(), POLLIN, 0};
    ASSERT_EQ(::poll(&ready, 1, -1), 1);
    RunnerLink link(runner.in(), runner.out());
    LinkFailure failure;
    EXPECT_FALSE(link.call("call 00", Reply::Kind::Done, 5.0, &failure));
    EXPECT_EQ(failure.status, "rule_violation");
    EXPECT_NE(failure.message.find("before it was asked"), std::string::npos) << failure.message;
}

TEST(RunnerLink, AFloodIsAViolationNotAHang) {
    LinkFailure failure;
    EXPECT_FALSE(callOnce(
        [](int in, int out) {
            readCommand(in);
            const std::string junk(1 << 16, 'x');
            for (int i = 0; i < 1000; ++i) {
                writeText(out, junk);
            }
        },
        Reply::Kind::Done, &failure));
    EXPECT_EQ(failure.status, "rule_violation");
    EXPECT_NE(failure.message.find("over"), std::string::npos) << failure.message;
}

TEST(RunnerLink, BinaryJunkIsAViolation) {
    LinkFailure failure;
    EXPECT_FALSE(callOnce(
        [](int in, int out) {
            readCommand(in);
            writeText(out, std::string("done \x01\x02\n", 8));
            readCommand(in);
        },
        Reply::Kind::Done, &failure));
    EXPECT_EQ(failure.status, "rule_violation");
    EXPECT_NE(failure.message.find("out of protocol"), std::string::npos) << failure.message;
}

TEST(RunnerLink, ASilentRunnerTimesOut) {
    LinkFailure failure;
    EXPECT_FALSE(callOnce(
        [](int in, int) {
            readCommand(in);
            ::sleep(30);
        },
        Reply::Kind::Done, &failure, 0.3));
    EXPECT_EQ(failure.status, "timeout");
    EXPECT_NE(failure.message.find("did not answer 'call'"), std::string::npos) << failure.message;
}

TEST(RunnerLink, TheRunnersOwnFailureIsKeptAndTheLinkStaysUsable) {
    LinkFailure failure;
    EXPECT_FALSE(callOnce(
        [](int in, int out) {
            readCommand(in);
            writeText(out, "fail timeout - the candidate did not finish within 10 s\n");
            readCommand(in);
        },
        Reply::Kind::Done, &failure));
    EXPECT_EQ(failure.status, "timeout");
    EXPECT_TRUE(failure.reported);
    EXPECT_EQ(failure.message, "the candidate did not finish within 10 s");
}

TEST(RunnerLink, AFailReplyCannotClaimSuccess) {
    LinkFailure failure;
    EXPECT_FALSE(callOnce(
        [](int in, int out) {
            readCommand(in);
            writeText(out, "fail ok - all good\n");
            readCommand(in);
        },
        Reply::Kind::Done, &failure));
    EXPECT_EQ(failure.status, "rule_violation");
}

namespace {
// Samples of a `ms` kernel with `overhead` ms of wall-clock around it.
std::vector<TimingClaim> samples(double ms, double overhead, int n, double jitter = 0.0) {
    std::vector<TimingClaim> v;
    for (int i = 0; i < n; ++i) {
        const double noise = jitter * std::sin(1.7 * i);
        v.push_back({ms, ms + overhead + std::fabs(noise)});
    }
    return v;
}
} // namespace

TEST(TimingClaims, HonestClaimsPass) {
    // Pipe and wake-ups cost the runner's samples ~0.1 ms more than the verifier's own.
    for (double ms : {0.01, 0.2, 1.5, 40.0}) {
        EXPECT_FALSE(
            implausibleTiming(samples(ms, 0.15, 24, 0.05), samples(ms, 0.05, 24, 0.05), 0.5 * ms))
            << ms;
    }
    EXPECT_FALSE(implausibleTiming({}, {}, 1.0));
}

TEST(TimingClaims, HiddenTimeIsCaught) {
    // The runner says 2 ms for a call the verifier waited 4.5 ms for.
    std::vector<TimingClaim> c;
    for (int i = 0; i < 20; ++i) {
        c.push_back({2.0, 4.5});
    }
    kev::link::TimingFigures f;
    const auto why = implausibleTiming(c, samples(4.4, 0.05, 20), 0.2, {}, &f);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("unaccounted for"), std::string::npos) << *why;
    EXPECT_NEAR(f.claimMs, 2.0, 1e-12);
    EXPECT_NEAR(f.excessMs, 2.5, 1e-12);
    EXPECT_NEAR(f.calibrationMs, 0.05, 1e-12);
    EXPECT_NEAR(f.hiddenMs, 2.45, 1e-12);
    EXPECT_NEAR(f.allowedMs, 1.0 + 0.2, 1e-12);
    // Only the medians say so: the verifier measures once more before it judges.
    EXPECT_TRUE(f.statistical);
}

TEST(TimingClaims, TheRunnersHonestOverheadOnTheH200Passes) {
    // Measured on the H200: the runner's round trip costs 0.3-0.55 ms more than the verifier's own
    // samples (pipe, wake-ups, the switch between the processes' contexts).
    for (double ms : {0.02, 0.19, 3.0}) {
        EXPECT_FALSE(implausibleTiming(samples(ms, 0.80, 30, 0.1), samples(ms, 0.25, 30, 0.05), 0))
            << ms;
    }
}

TEST(TimingClaims, AClaimLongerThanTheWaitIsALie) {
    std::vector<TimingClaim> c = samples(1.0, 0.1, 10);
    c[3] = {2.0, 1.1};
    kev::link::TimingFigures f;
    const auto why = implausibleTiming(c, samples(1.0, 0.05, 10), 0, {}, &f);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("longer than"), std::string::npos) << *why;
    EXPECT_FALSE(f.statistical); // evidence on its own: no second measurement
}

TEST(TimingClaims, BeatingTheRooflineByHalfIsImpossible) {
    kev::link::TimingFigures f;
    const auto why = implausibleTiming(samples(0.01, 0.1, 10), samples(0.5, 0.05, 10), 0.2, {}, &f);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("roofline"), std::string::npos) << *why;
    EXPECT_FALSE(f.statistical);
}

TEST(Randomness, ComesFromGetrandom) {
    const uint64_t a = kev::link::secureRandom64();
    const uint64_t b = kev::link::secureRandom64();
    EXPECT_NE(a, b);
}

namespace {
kev::json::Value resultLine(const std::string& status) {
    kev::json::Value v = kev::json::Value::object();
    v["type"] = "result";
    v["status"] = status;
    v["message"] = "correct; 1.2x reference";
    v["checks"] = kev::json::Value::array();
    return v;
}

kev::process::Result exitedCleanly() {
    kev::process::Result r;
    r.started = true;
    r.exited = true;
    r.exitCode = 0;
    return r;
}

kev::verdict::ChildLines lines(kev::json::Value result) {
    kev::verdict::ChildLines l;
    l.result = std::move(result);
    l.results = l.result.isObject() ? 1 : 0;
    return l;
}
} // namespace

TEST(Verdict, TheVerifierDecidesAndTheRunnerOnlyAdds) {
    kev::json::Value runner = kev::json::Value::object();
    runner["type"] = "result";
    runner["status"] = "ok"; // ignored: the runner has no say in the status
    runner["checks"] = kev::json::Value::array();
    auto o = kev::verdict::combine(lines(resultLine("incorrect")), exitedCleanly(), lines(runner),
                                   exitedCleanly(), 60);
    EXPECT_EQ(o.status, "incorrect");
    o = kev::verdict::combine(lines(resultLine("ok")), exitedCleanly(), lines(runner),
                              exitedCleanly(), 60);
    EXPECT_EQ(o.status, "ok");
}

TEST(Verdict, TheRunnersViolationsWorsenAnOk) {
    kev::json::Value runner = kev::json::Value::object();
    runner["type"] = "result";
    runner["violations"] = kev::json::Value::array();
    runner["violations"].push("kernel launched on stream 0x1234");
    auto o = kev::verdict::combine(lines(resultLine("ok")), exitedCleanly(), lines(runner),
                                   exitedCleanly(), 60);
    EXPECT_EQ(o.status, "rule_violation");
    EXPECT_EQ(o.message, "kernel launched on stream 0x1234");
    EXPECT_EQ(o.child.find("violations")->size(), 1u);
}

TEST(Verdict, TheRunnersViolationsTakePrecedenceOverIncorrect) {
    // A launch after kevolve_launch returned leaves NaN in a later output: the launch is the cause.
    kev::json::Value runner = kev::json::Value::object();
    runner["type"] = "result";
    runner["violations"] = kev::json::Value::array();
    runner["violations"].push("2 launch(es) from a thread the harness did not start");
    auto o = kev::verdict::combine(lines(resultLine("incorrect")), exitedCleanly(), lines(runner),
                                   exitedCleanly(), 60);
    EXPECT_EQ(o.status, "rule_violation");
    EXPECT_EQ(o.message, "2 launch(es) from a thread the harness did not start");
}

TEST(Verdict, AMissingOrForgedRunnerLineIsNeverOk) {
    auto o = kev::verdict::combine(lines(resultLine("ok")), exitedCleanly(),
                                   kev::verdict::ChildLines{}, exitedCleanly(), 60);
    EXPECT_EQ(o.status, "runtime_error");
    kev::verdict::ChildLines forged = lines(resultLine("ok"));
    forged.forged = 1;
    o = kev::verdict::combine(lines(resultLine("ok")), exitedCleanly(), forged, exitedCleanly(),
                              60);
    EXPECT_EQ(o.status, "rule_violation");
    kev::verdict::ChildLines two = lines(resultLine("ok"));
    two.results = 2;
    o = kev::verdict::combine(lines(resultLine("ok")), exitedCleanly(), two, exitedCleanly(), 60);
    EXPECT_EQ(o.status, "rule_violation");
}

TEST(Verdict, ASandboxKillOfTheRunnerExplainsTheVerifiersError) {
    kev::json::Value v = resultLine("runtime_error");
    v["message"] = "the runner ended during 'call' (no reply)";
    kev::process::Result killed;
    killed.started = true;
    killed.signal = SIGSYS;
    killed.err = "the candidate tries fork";
    auto o =
        kev::verdict::combine(lines(v), exitedCleanly(), kev::verdict::ChildLines{}, killed, 60);
    EXPECT_EQ(o.status, "rule_violation");
    EXPECT_EQ(o.message, "the sandbox killed the candidate: forbidden system call");
    EXPECT_EQ(o.child.find("error")->find("process")->asString(), "runner");
}

TEST(Verdict, NoVerdictWithoutTheVerifier) {
    kev::process::Result crashed;
    crashed.started = true;
    crashed.exited = true;
    crashed.exitCode = 3;
    kev::json::Value runner = kev::json::Value::object();
    runner["type"] = "result";
    auto o = kev::verdict::combine(kev::verdict::ChildLines{}, crashed, lines(runner),
                                   exitedCleanly(), 60);
    EXPECT_EQ(o.status, "runtime_error");
}

TEST(Verdict, PeerPipesAreLiftedAndCloseOnExecUntilHandedOn) {
    int fds[2] = {-1, -1};
    std::string error;
    ASSERT_TRUE(kev::verdict::makePipe(fds, &error)) << error;
    for (int fd : fds) {
        EXPECT_GE(fd, 10) << "above the descriptors a child's streams are dup2'd onto";
        EXPECT_TRUE(::fcntl(fd, F_GETFD) & FD_CLOEXEC);
    }
    ASSERT_TRUE(kev::verdict::setInheritable(fds[0], true));
    EXPECT_FALSE(::fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
    ASSERT_TRUE(kev::verdict::setInheritable(fds[0], false));
    EXPECT_TRUE(::fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
    ::close(fds[0]);
    ::close(fds[1]);
    EXPECT_FALSE(kev::verdict::setInheritable(fds[0], true)) << "a closed descriptor";
}
