// The strict result-channel readers (result_channel.h): framing, bounds, the protocol's rules, and
// that nothing outside them is ever silently dropped.
#include "process.h"
#include "result_channel.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using kev::channel::Limits;
using kev::channel::LineReader;
using kev::channel::ResultProtocol;

namespace {

void feed(LineReader& r, const std::string& bytes) {
    r.feed(bytes.data(), bytes.size());
}

// Feeds `bytes` in chunks of `chunk` bytes: framing must not depend on how reads split a stream.
void feedChunked(LineReader& r, const std::string& bytes, size_t chunk) {
    for (size_t i = 0; i < bytes.size(); i += chunk)
        r.feed(bytes.data() + i, std::min(chunk, bytes.size() - i));
}

const char* kToken = "0123456789abcdef0123456789abcdef";

std::string resultLine(const std::string& token = kToken) {
    return R"({"type":"result","status":"ok","token":")" + token + "\"}";
}

} // namespace

TEST(LineReader, SplitsLinesAcrossAnyChunking) {
    const std::string stream = "one\ntwo\r\n\tthree\n";
    for (size_t chunk : {1u, 2u, 3u, 7u, 100u}) {
        LineReader r;
        feedChunked(r, stream, chunk);
        r.close();
        EXPECT_TRUE(r.ok()) << chunk;
        EXPECT_EQ(r.take(), (std::vector<std::string>{"one", "two", "\tthree"})) << chunk;
        EXPECT_EQ(r.bytes(), stream.size());
        EXPECT_EQ(r.lines(), 3u);
    }
}

TEST(LineReader, OverlongLineIsAViolationNotADrop) {
    Limits l;
    l.maxLineBytes = 100;
    LineReader r(l);
    feed(r, "short\n" + std::string(150, 'x') + "\nafter\n");
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.violation()->kind, "line_too_long");
    EXPECT_EQ(r.violation()->line, 2u);
    EXPECT_EQ(r.violation()->offset, 6u);
    EXPECT_NE(r.violation()->message.find("limit of 100 bytes"), std::string::npos);
    EXPECT_EQ(r.violation()->excerpt.substr(0, 10), "xxxxxxxxxx");
    // The line before the violation came out; nothing after it is kept.
    EXPECT_EQ(r.take(), (std::vector<std::string>{"short"}));
}

TEST(LineReader, FloodIsRefusedAndCostsNoMemory) {
    // 80 MB of junk without a newline, in 64 KiB reads (what a pipe delivers).
    LineReader r;
    const std::string chunk(65536, 'J');
    for (int i = 0; i < 80 * 16; ++i)
        feed(r, chunk);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.violation()->kind, "line_too_long");
    EXPECT_EQ(r.bytes(), 80ull * 16 * 65536);
    EXPECT_TRUE(r.take().empty());
    const auto j = r.toJson();
    EXPECT_FALSE(j.find("ok")->asBool());
    EXPECT_EQ(j.find("violation")->find("kind")->asString(), "line_too_long");
}

TEST(LineReader, StreamAndLineCountsAreBounded) {
    Limits l;
    l.maxTotalBytes = 20;
    LineReader total(l);
    feed(total, "0123456789\n0123456789\n");
    EXPECT_EQ(total.violation()->kind, "stream_too_long");
    EXPECT_EQ(total.take(), (std::vector<std::string>{"0123456789"}));

    Limits n;
    n.maxLines = 2;
    LineReader lines(n);
    feed(lines, "a\nb\nc\n");
    EXPECT_EQ(lines.violation()->kind, "too_many_lines");
    EXPECT_EQ(lines.violation()->line, 3u);
}

TEST(LineReader, ControlBytesAndNulAreRefused) {
    for (const std::string& bad :
         {std::string("ok\nab\0cd\n", 9), std::string("a\x1b[2Jb\n"), std::string("a\rb\n")}) {
        LineReader r;
        feed(r, bad);
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.violation()->kind, "control_byte");
        EXPECT_NE(r.violation()->excerpt.find("\\x"), std::string::npos);
    }
    Limits binary;
    binary.textOnly = false;
    LineReader r(binary);
    feed(r, std::string("ab\0cd\n", 6));
    EXPECT_TRUE(r.ok());
}

TEST(LineReader, UnterminatedLastLineIsAViolation) {
    LineReader r;
    feed(r, "one\nhalf a li");
    EXPECT_TRUE(r.ok());
    r.close();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.violation()->kind, "unterminated_line");
    EXPECT_EQ(r.violation()->excerpt, "half a li");
    EXPECT_EQ(r.violation()->offset, 4u);
    feed(r, "more");
    EXPECT_EQ(r.violation()->kind, "unterminated_line") << "the first violation wins";
}

TEST(ResultProtocol, AcceptsProgressThenOneResult) {
    LineReader r;
    ResultProtocol p(kToken);
    feed(r, "{\"type\":\"progress\",\"stage\":\"time\"}\n" + resultLine() + "\n");
    r.close();
    std::vector<std::string> types;
    for (const auto& line : r.take()) {
        auto m = p.accept(r, line);
        ASSERT_TRUE(m) << line;
        types.push_back(m->type);
        EXPECT_EQ(m->value.find("token"), nullptr) << "the token is removed";
    }
    EXPECT_EQ(types, (std::vector<std::string>{"progress", "result"}));
    EXPECT_TRUE(p.finish(r, true));
    EXPECT_TRUE(r.ok());
}

TEST(ResultProtocol, EveryDeviationRefusesTheChannel) {
    struct Case {
        std::string stream;
        const char* kind;
        uint64_t line;
    };
    const Case cases[] = {
        {"junk\n" + resultLine() + "\n", "not_json", 1},
        {"[1,2]\n", "not_an_object", 1},
        {"{\"status\":\"ok\"}\n", "unknown_type", 1},
        {"{\"type\":\"verdict\"}\n", "unknown_type", 1},
        {R"({"type":"result","status":"ok"})"
         "\n",
         "missing_token", 1},
        {resultLine("ffffffffffffffffffffffffffffffff") + "\n", "wrong_token", 1},
        {resultLine() + "\n" + resultLine() + "\n", "after_result", 2},
        {resultLine() + "\n{\"type\":\"progress\"}\n", "after_result", 2},
    };
    for (const auto& c : cases) {
        LineReader r;
        ResultProtocol p(kToken);
        feed(r, c.stream);
        for (const auto& line : r.take())
            p.accept(r, line);
        ASSERT_FALSE(r.ok()) << c.stream;
        EXPECT_EQ(r.violation()->kind, c.kind) << c.stream;
        EXPECT_EQ(r.violation()->line, c.line) << c.stream;
        EXPECT_FALSE(r.violation()->excerpt.empty());
    }
    LineReader r;
    ResultProtocol p(kToken);
    feed(r, "{\"type\":\"progress\"}\n");
    for (const auto& line : r.take())
        p.accept(r, line);
    EXPECT_FALSE(p.finish(r, true));
    EXPECT_EQ(r.violation()->kind, "no_result");
}

TEST(ResultProtocol, OtherTypesForOtherChannels) {
    LineReader r;
    ResultProtocol p("", {"verdict_request"}, "verdict");
    feed(r, "{\"type\":\"verdict_request\"}\n{\"type\":\"verdict\",\"ok\":true}\n");
    for (const auto& line : r.take())
        EXPECT_TRUE(p.accept(r, line)) << line;
    EXPECT_TRUE(p.finish(r, true));
}

// Through a real pipe: a child that floods fd 3 is killed for it and the result says why.
TEST(ResultChannelProcess, FloodingChildIsRefusedAndKilled) {
    kev::process::Spec s;
    s.argv = {"/bin/sh", "-c",
              "echo '{\"type\":\"progress\"}' >&3; head -c 80000000 /dev/zero | tr '\\0' J >&3; "
              "echo never"};
    s.channel = true;
    std::vector<std::string> lines;
    const auto r = kev::process::run(s, &lines);
    EXPECT_TRUE(r.channelRefused);
    EXPECT_FALSE(r.channel.find("ok")->asBool());
    EXPECT_EQ(r.channel.find("violation")->find("kind")->asString(), "line_too_long");
    EXPECT_EQ(lines, (std::vector<std::string>{"{\"type\":\"progress\"}"}));
    EXPECT_FALSE(r.exited) << "killed, not left to finish";
}

TEST(ResultChannelProcess, CleanChildKeepsItsChannel) {
    kev::process::Spec s;
    s.argv = {"/bin/sh", "-c", "printf 'a\\nb\\n' >&3"};
    s.channel = true;
    std::vector<std::string> lines;
    const auto r = kev::process::run(s, &lines);
    EXPECT_FALSE(r.channelRefused);
    EXPECT_TRUE(r.channel.find("ok")->asBool());
    EXPECT_EQ(lines, (std::vector<std::string>{"a", "b"}));
}
