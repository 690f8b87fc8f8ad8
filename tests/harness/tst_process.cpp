#include "process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <cstdio>
#include <cstdlib>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

using kev::process::Process;
using kev::process::Spec;

namespace {

Spec shell(const std::string& script, double timeoutS = 0) {
    Spec s;
    s.argv = {"/bin/sh", "-c", script};
    s.timeoutS = timeoutS;
    return s;
}

// Alive and not a zombie: a killed grandchild waits for whoever adopted it to reap it.
bool alive(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!std::getline(stat, text))
        return false;
    const auto close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

// The child's descriptors, less those this test process itself lets every exec inherit (the test
// runner may pass some down; exec-guard closes those for real children).
std::set<int> openFdsOf(pid_t pid) {
    std::set<int> fds;
    for (const auto& e :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
        const int fd = std::stoi(e.path().filename().string());
        const int flags = ::fcntl(fd, F_GETFD);
        if (fd <= 2 || flags < 0 || (flags & FD_CLOEXEC))
            fds.insert(fd);
    }
    return fds;
}

// Run as a stand-in child (KEV_TEST_ROLE set): "escape" joins the parent's process group and
// waits to be killed.
struct StandInChild {
    StandInChild() {
        const char* role = std::getenv("KEV_TEST_ROLE");
        if (!role || std::string(role) != "escape")
            return;
        const pid_t parentGroup = ::getpgid(::getppid());
        if (::setpgid(0, parentGroup) != 0) {
            std::printf("setpgid failed\n");
            std::_Exit(2);
        }
        std::printf("escaped from %d into %d\n", static_cast<int>(::getpid()),
                    static_cast<int>(parentGroup));
        std::fflush(stdout);
        for (;;)
            ::pause();
    }
};
const StandInChild g_standIn;

} // namespace

TEST(Process, CapturesOutputAndExitCode) {
    const auto r = kev::process::run(shell("echo out; echo err >&2; exit 3"));
    EXPECT_TRUE(r.started);
    EXPECT_TRUE(r.exited);
    EXPECT_EQ(r.exitCode, 3);
    EXPECT_EQ(r.out, "out\n");
    EXPECT_EQ(r.err, "err\n");
    EXPECT_FALSE(r.timedOut);
}

TEST(Process, MergedStderrKeepsOrder) {
    Spec s = shell("echo 1; echo 2 >&2; echo 3");
    s.mergeStderr = true;
    const auto r = kev::process::run(s);
    EXPECT_EQ(r.out, "1\n2\n3\n");
    EXPECT_EQ(r.err, "");
}

TEST(Process, ReportsTheSignal) {
    const auto r = kev::process::run(shell("kill -SEGV $$"));
    EXPECT_FALSE(r.exited);
    EXPECT_EQ(r.signal, SIGSEGV);
    EXPECT_EQ(kev::process::signalName(r.signal), "SIGSEGV");
    EXPECT_EQ(kev::process::signalName(SIGSYS), "SIGSYS");
    EXPECT_EQ(kev::process::signalName(64), "signal 64");
}

TEST(Process, MissingProgramIsASpawnError) {
    Spec s;
    s.argv = {"kevolve-no-such-program"};
    const auto r = kev::process::run(s);
    EXPECT_FALSE(r.started);
    EXPECT_EQ(r.spawnError, "kevolve-no-such-program: not found or not executable");
}

TEST(Process, HungChildIsKilledOnTimeout) {
    const auto t0 = std::chrono::steady_clock::now();
    Spec s;
    s.argv = {"sleep", "100"};
    s.timeoutS = 0.3;
    const auto r = kev::process::run(s);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_TRUE(r.timedOut);
    EXPECT_EQ(r.signal, SIGKILL);
    EXPECT_LT(elapsed, 5.0);
    EXPECT_GE(elapsed, 0.3);
}

TEST(Process, TimeoutKillsTheWholeGroup) {
    // The shell's children write their pids, then everything hangs.
    Process p(shell("sleep 100 & echo $!; sleep 100 & echo $!; wait", 0.5));
    ASSERT_TRUE(p.start());
    while (!p.service()) {
        pollfd fds[3];
        nfds_t n = 0;
        for (int fd : p.openFds())
            fds[n++] = {fd, POLLIN, 0};
        ::poll(fds, n, 50);
    }
    ASSERT_TRUE(p.result().timedOut);
    std::vector<pid_t> pids;
    size_t start = 0;
    const std::string& out = p.result().out;
    while (start < out.size()) {
        const size_t end = out.find('\n', start);
        pids.push_back(std::stoi(out.substr(start, end - start)));
        start = end + 1;
    }
    ASSERT_EQ(pids.size(), 2u) << out;
    // SIGKILL is delivered at once, but the grandchildren are reaped by init: allow a moment.
    for (int i = 0; i < 100 && (alive(pids[0]) || alive(pids[1])); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(alive(pids[0]));
    EXPECT_FALSE(alive(pids[1]));
}

TEST(Process, GrandchildrenDieWhenTheLeaderExits) {
    // The leader exits at once; the background sleep would otherwise outlive it holding stdout.
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = kev::process::run(shell("sleep 100 & echo $!", 10));
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_TRUE(r.exited);
    EXPECT_LT(elapsed, 5.0);
    const pid_t grandchild = std::stoi(r.out);
    for (int i = 0; i < 100 && alive(grandchild); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(alive(grandchild));
}

TEST(Process, CancelKillsAndSaysSo) {
    Process p(shell("sleep 100"));
    ASSERT_TRUE(p.start());
    EXPECT_TRUE(p.running());
    p.cancel();
    while (!p.service())
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(p.result().cancelled);
    EXPECT_FALSE(p.result().timedOut);
    EXPECT_EQ(p.result().signal, SIGKILL);
}

TEST(Process, OwnProcessGroup) {
    const auto r = kev::process::run(shell("ps -o pgid= -p $$ | tr -d ' '; echo $$"));
    ASSERT_TRUE(r.exited) << r.err;
    const auto nl = r.out.find('\n');
    EXPECT_EQ(r.out.substr(0, nl), r.out.substr(nl + 1, r.out.size() - nl - 2));
    EXPECT_NE(std::stoi(r.out), ::getpgrp());
}

TEST(Process, ChildHoldsOnlyItsOwnPipes) {
    // A descriptor the parent opened without close-on-exec is not the point here (exec-guard
    // handles those); our own pipes must never leak, even into a sibling started later.
    Spec first = shell("sleep 100");
    first.channel = true;
    Process a(first);
    ASSERT_TRUE(a.start());
    Spec second = shell("sleep 100");
    second.channel = true;
    Process b(second);
    ASSERT_TRUE(b.start());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    // fd 3 is the channel; the filter above hides it only when the runner passed down its own 3.
    const std::set<int> withChannel =
        ::fcntl(3, F_GETFD) == 0 ? std::set<int>{0, 1, 2} : std::set<int>{0, 1, 2, 3};
    EXPECT_EQ(openFdsOf(a.pid()), withChannel);
    EXPECT_EQ(openFdsOf(b.pid()), withChannel);
    Process c(shell("sleep 100"));
    ASSERT_TRUE(c.start());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(openFdsOf(c.pid()), (std::set<int>{0, 1, 2}));
    EXPECT_EQ(std::filesystem::read_symlink("/proc/" + std::to_string(c.pid()) + "/fd/0"),
              "/dev/null");
}

TEST(Process, ChannelLinesOnFd3) {
    Spec s = shell("printf 'one\\ntwo\\n' >&3; echo stdout");
    s.channel = true;
    std::vector<std::string> lines;
    const auto r = kev::process::run(s, &lines);
    EXPECT_EQ(r.exitCode, 0);
    EXPECT_EQ(r.out, "stdout\n");
    EXPECT_EQ(lines, (std::vector<std::string>{"one", "two"}));
    EXPECT_FALSE(r.channelRefused);
}

TEST(Process, UnterminatedLastChannelLineRefusesTheChannel) {
    // A child that ends on its own must have ended its lines: a partial one is not dropped.
    Spec s = shell("printf 'one\\nthree' >&3");
    s.channel = true;
    std::vector<std::string> lines;
    const auto r = kev::process::run(s, &lines);
    EXPECT_EQ(lines, (std::vector<std::string>{"one"}));
    EXPECT_TRUE(r.channelRefused);
    EXPECT_EQ(r.channel.find("violation")->find("kind")->asString(), "unterminated_line");
    EXPECT_EQ(r.channel.find("violation")->find("excerpt")->asString(), "three");
}

TEST(Process, OverlongChannelLineRefusesTheChannel) {
    Spec s = shell("head -c 5000 /dev/zero | tr '\\0' x >&3; printf '\\nok\\n' >&3");
    s.channel = true;
    s.channelLimits.maxLineBytes = 1000;
    std::vector<std::string> lines;
    const auto r = kev::process::run(s, &lines);
    EXPECT_TRUE(r.channelRefused);
    EXPECT_EQ(r.channel.find("violation")->find("kind")->asString(), "line_too_long");
    EXPECT_TRUE(lines.empty()) << "nothing after a violation is taken";
}

TEST(Process, OverlongLineInOneReadRefusesTheChannel) {
    // The whole stream sits in the pipe before the first read: the check must not wait for the
    // end of a read to notice the line is too long.
    Spec s = shell("f=kev_big_$$; head -c 3000 /dev/zero | tr '\\0' x > $f; "
                   "printf '\\nok\\n' >> $f; cat $f >&3; rm $f");
    s.channel = true;
    s.channelLimits.maxLineBytes = 1000;
    s.cwd = "/tmp";
    kev::process::Process p(s);
    ASSERT_TRUE(p.start());
    while (!p.service())
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_TRUE(p.result().channelRefused);
    EXPECT_TRUE(p.takeChannelLines().empty());
}

TEST(Process, EnvironmentOverridesAndCwd) {
    Spec s = shell("echo \"$KEV_A $KEV_B\"; pwd");
    s.env = {{"KEV_A", "one"}, {"KEV_B", "two"}};
    s.cwd = "/tmp";
    ::setenv("KEV_A", "inherited", 1);
    const auto r = kev::process::run(s);
    ::unsetenv("KEV_A");
    EXPECT_EQ(r.out, "one two\n/tmp\n");

    Spec clean = shell("echo \"[$HOME]\"");
    clean.inheritEnv = false;
    EXPECT_EQ(kev::process::run(clean).out, "[]\n");
}

// A user's keys never reach a child: only allowlisted names pass, secret-looking ones never.
TEST(Process, ChildEnvironmentIsAllowlisted) {
    const std::vector<std::pair<const char*, const char*>> set = {
        {"OPENAI_API_KEY", "sk-secret-1"},
        {"KEVOLVE_API_KEY", "kv-secret-2"},
        {"ANTHROPIC_API_KEY", "secret-3"},
        {"GITHUB_TOKEN", "secret-4"},
        {"AWS_SECRET_ACCESS_KEY", "secret-5"},
        {"MY_PASSWORD", "secret-6"},
        {"LD_PRELOAD", "/tmp/evil.so"},
        {"KEV_UNLISTED", "unlisted"},
        {"KEV_PASSED", "passed"},
        {"CUDA_VISIBLE_DEVICES", "0"},
        {"LC_ALL", "C"},
        {"KEVOLVE_CACHE_DIR", "/tmp/kev-cache"},
        {"CUDA_AUTH_TOKEN", "secret-7"},
        {"KEVOLVE_PASS_ENV", "KEV_PASSED,GITHUB_TOKEN"}};
    for (const auto& [name, value] : set)
        ::setenv(name, value, 1);
    Spec s;
    s.argv = {"env"};
    s.env = {{"KEVOLVE_RESULT_TOKEN", "the-harness-own"}};
    const auto r = kev::process::run(s);
    for (const auto& [name, value] : set)
        ::unsetenv(name);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    for (const char* secret :
         {"secret-", "sk-secret", "kv-secret", "evil.so", "unlisted", "KEVOLVE_PASS_ENV"})
        EXPECT_EQ(r.out.find(secret), std::string::npos) << secret << " leaked:\n" << r.out;
    for (const char* kept :
         {"KEV_PASSED=passed", "CUDA_VISIBLE_DEVICES=0", "LC_ALL=C",
          "KEVOLVE_CACHE_DIR=/tmp/kev-cache", "PATH=", "KEVOLVE_RESULT_TOKEN=the-harness-own"})
        EXPECT_NE(r.out.find(kept), std::string::npos) << kept << " missing:\n" << r.out;

    EXPECT_TRUE(kev::process::looksSecret("openai_api_key"));
    EXPECT_TRUE(kev::process::looksSecret("HF_TOKEN"));
    EXPECT_FALSE(kev::process::inheritable("OPENAI_API_KEY"));
    EXPECT_TRUE(kev::process::inheritable("PATH"));
    EXPECT_TRUE(kev::process::inheritable("NVIDIA_VISIBLE_DEVICES"));
    EXPECT_FALSE(kev::process::inheritable("PYTHONPATH"));
}

// A child that leaves its process group (setpgid) still dies at its deadline and is reaped: the
// kill goes to its pid as well as its group.
TEST(Process, ChildThatLeftItsGroupIsStillKilled) {
    Spec s;
    s.argv = {"/proc/self/exe"};
    s.env = {{"KEV_TEST_ROLE", "escape"}};
    s.timeoutS = 0.5;
    Process p(s);
    ASSERT_TRUE(p.start());
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    bool done = false;
    while (!(done = p.service()) && std::chrono::steady_clock::now() < giveUp)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!done)
        ::kill(p.pid(), SIGKILL);
    ASSERT_TRUE(done) << "the escaped child was not killed";
    EXPECT_TRUE(p.result().timedOut);
    EXPECT_EQ(p.result().signal, SIGKILL);
    EXPECT_NE(p.result().out.find("escaped"), std::string::npos) << p.result().out;
    EXPECT_FALSE(alive(p.pid()));
}

TEST(Process, IgnoredSignalsAreResetInTheChild) {
    const auto old = std::signal(SIGPIPE, SIG_IGN);
    const auto r = kev::process::run(shell("kill -PIPE $$; echo survived"));
    std::signal(SIGPIPE, old);
    EXPECT_EQ(r.signal, SIGPIPE);
    EXPECT_EQ(r.out, "");
}

TEST(Process, CaptureIsBoundedKeepingHeadAndTail) {
    Spec s = shell("echo HEAD; head -c 200000 /dev/zero | tr '\\0' x; echo; echo TAIL");
    s.maxCapture = 1000;
    const auto r = kev::process::run(s);
    EXPECT_LT(r.out.size(), 1100u);
    EXPECT_EQ(r.out.substr(0, 5), "HEAD\n");
    EXPECT_EQ(r.out.substr(r.out.size() - 5), "TAIL\n");
    EXPECT_NE(r.out.find("bytes omitted"), std::string::npos);
}

TEST(Process, TrimMiddle) {
    EXPECT_EQ(kev::process::trimMiddle("short", 100), "short");
    const std::string t = kev::process::trimMiddle(std::string(50, 'a') + std::string(50, 'b'), 20);
    EXPECT_EQ(t, "aaaaaaaaaa\n[... 80 bytes omitted ...]\nbbbbbbbbbb");
}
