#include "runner_link.h"

#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace kev::link {

namespace {

double median(std::vector<double> v) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<std::string> splitSpaces(const std::string& line, size_t maxFields) {
    std::vector<std::string> fields;
    size_t i = 0;
    while (i < line.size() && fields.size() + 1 < maxFields) {
        const size_t j = line.find(' ', i);
        if (j == std::string::npos) {
            break;
        }
        fields.push_back(line.substr(i, j - i));
        i = j + 1;
    }
    fields.push_back(line.substr(i));
    return fields;
}

// A decimal unsigned integer without sign, spaces or leading zeros (beyond "0").
bool parseCount(const std::string& text, uint64_t* out) {
    if (text.empty() || text.size() > 20 || (text.size() > 1 && text[0] == '0')) {
        return false;
    }
    uint64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') {
            return false;
        }
        const uint64_t d = static_cast<uint64_t>(c - '0');
        if (v > (UINT64_MAX - d) / 10) {
            return false;
        }
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

// A finite non-negative decimal in plain or exponent notation, nothing else.
bool parseMs(const std::string& text, double* out) {
    if (text.empty() || text.size() > 32) {
        return false;
    }
    for (char c : text) {
        if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')) {
            return false;
        }
    }
    if (text[0] == '-' || text[0] == '+') {
        return false;
    }
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v) || v < 0 ||
        v > 3.6e6) {
        return false;
    }
    *out = v;
    return true;
}

bool printable(const std::string& text) {
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return static_cast<unsigned char>(c) >= 0x20 && c != 0x7f; });
}

std::string quoted(const std::string& line) {
    std::string q = line.substr(0, 120);
    for (char& c : q) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            c = '?';
        }
    }
    return "\"" + q + (line.size() > 120 ? "...\"" : "\"");
}

} // namespace

const char* toString(Reply::Kind kind) {
    switch (kind) {
    case Reply::Kind::Ready:
        return "ready";
    case Reply::Kind::Mapped:
        return "mapped";
    case Reply::Kind::Unmapped:
        return "unmapped";
    case Reply::Kind::Workspace:
        return "workspace";
    case Reply::Kind::Done:
        return "done";
    case Reply::Kind::Sample:
        return "sample";
    case Reply::Kind::Fail:
        return "fail";
    case Reply::Kind::Bye:
        return "bye";
    }
    return "?";
}

std::optional<Reply> parseReply(const std::string& line, std::string* error) {
    const auto bad = [&](const std::string& why) -> std::optional<Reply> {
        if (error) {
            *error = why + ": " + quoted(line);
        }
        return std::nullopt;
    };
    if (line.size() > kMaxLine) {
        return bad("a line of " + std::to_string(line.size()) + " bytes");
    }
    if (!printable(line)) {
        return bad("control characters in a reply");
    }
    const std::vector<std::string> f = splitSpaces(line, 4);
    const std::string& key = f[0];
    Reply r;
    if (key == "ready" || key == "unmapped" || key == "bye") {
        if (f.size() != 1) {
            return bad("'" + key + "' takes no fields");
        }
        r.kind = key == "ready" ? Reply::Kind::Ready
                 : key == "bye" ? Reply::Kind::Bye
                                : Reply::Kind::Unmapped;
        return r;
    }
    if (key == "mapped" || key == "workspace" || key == "done") {
        if (f.size() != 2 || !parseCount(f[1], &r.count)) {
            return bad("'" + key + "' takes one unsigned integer");
        }
        r.kind = key == "mapped" ? Reply::Kind::Mapped
                 : key == "done" ? Reply::Kind::Done
                                 : Reply::Kind::Workspace;
        return r;
    }
    if (key == "sample") {
        if (f.size() != 2 || !parseMs(f[1], &r.ms)) {
            return bad("'sample' takes one finite non-negative time in ms");
        }
        r.kind = Reply::Kind::Sample;
        return r;
    }
    if (key == "fail") {
        if (f.size() != 4 || (f[2] != "sticky" && f[2] != "-")) {
            return bad("'fail' takes a status, sticky or -, and a message");
        }
        if (f[1] != "runtime_error" && f[1] != "rule_violation" && f[1] != "timeout") {
            return bad("'fail' with an unknown status");
        }
        r.kind = Reply::Kind::Fail;
        r.status = f[1];
        r.sticky = f[2] == "sticky";
        r.message = f[3];
        return r;
    }
    return bad("an unknown reply");
}

std::string formatReply(const Reply& r) {
    char buf[64];
    switch (r.kind) {
    case Reply::Kind::Ready:
    case Reply::Kind::Unmapped:
    case Reply::Kind::Bye:
        return toString(r.kind);
    case Reply::Kind::Mapped:
    case Reply::Kind::Workspace:
    case Reply::Kind::Done:
        return std::string(toString(r.kind)) + " " + std::to_string(r.count);
    case Reply::Kind::Sample:
        std::snprintf(buf, sizeof buf, "sample %.9g", r.ms);
        return buf;
    case Reply::Kind::Fail: {
        std::string m = r.message.substr(0, 2000);
        for (char& c : m) {
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                c = ' ';
            }
        }
        return "fail " + r.status + (r.sticky ? " sticky " : " - ") + (m.empty() ? "-" : m);
    }
    }
    return "?";
}

double monotonicSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

uint64_t secureRandom64() {
    uint64_t v = 0;
    size_t got = 0;
    while (got < sizeof v) {
        const ssize_t n = ::getrandom(reinterpret_cast<char*>(&v) + got, sizeof v - got, 0);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            throw std::runtime_error(std::string("getrandom failed: ") + std::strerror(errno));
        }
        got += static_cast<size_t>(n);
    }
    return v;
}

LineReader::Status LineReader::next(double timeoutS, std::string* line) {
    const double deadline = monotonicSeconds() + timeoutS;
    for (;;) {
        const size_t nl = m_buffer.find('\n');
        if (nl != std::string::npos) {
            if (nl > kMaxLine) {
                return Status::TooLong;
            }
            *line = m_buffer.substr(0, nl);
            m_buffer.erase(0, nl + 1);
            return Status::Line;
        }
        if (m_buffer.size() > kMaxLine) {
            return Status::TooLong;
        }
        if (m_eof) {
            return Status::Eof;
        }
        const double left = deadline - monotonicSeconds();
        if (left <= 0) {
            return Status::Timeout;
        }
        pollfd p{m_fd, POLLIN, 0};
        const int ms = static_cast<int>(std::min(left * 1000.0 + 1, 1e9));
        const int rc = ::poll(&p, 1, ms);
        if (rc < 0 && errno == EINTR) {
            continue;
        }
        if (rc < 0) {
            return Status::Error;
        }
        if (rc == 0) {
            continue;
        }
        char chunk[4096];
        const ssize_t n = ::read(m_fd, chunk, sizeof chunk);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
            continue;
        }
        if (n <= 0) {
            m_eof = true;
            continue;
        }
        m_buffer.append(chunk, static_cast<size_t>(n));
    }
}

bool LineReader::pending() {
    if (!m_buffer.empty()) {
        return true;
    }
    if (m_eof) {
        return false;
    }
    pollfd p{m_fd, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN)) {
        return false;
    }
    char c;
    const ssize_t n = ::read(m_fd, &c, 1);
    if (n == 1) {
        m_buffer.push_back(c);
        return true;
    }
    if (n == 0) {
        m_eof = true;
    }
    return false;
}

bool writeAll(int fd, const std::string& data, double timeoutS) {
    const double deadline = monotonicSeconds() + timeoutS;
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n > 0) {
            done += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && errno == EAGAIN) {
            const double left = deadline - monotonicSeconds();
            if (left <= 0) {
                return false;
            }
            pollfd p{fd, POLLOUT, 0};
            ::poll(&p, 1, static_cast<int>(left * 1000) + 1);
            continue;
        }
        return false;
    }
    return true;
}

std::optional<Reply> RunnerLink::expect(Reply::Kind expected, const std::string& during,
                                        double timeoutS, LinkFailure* failure) {
    std::string line;
    const LineReader::Status s = m_reader.next(timeoutS, &line);
    switch (s) {
    case LineReader::Status::Line:
        break;
    case LineReader::Status::Eof:
        *failure = {"runtime_error", "the runner ended during " + during + " (no reply)"};
        return std::nullopt;
    case LineReader::Status::Timeout: {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.3g s", timeoutS);
        *failure = {"timeout", "the runner did not answer " + during + " within " + buf};
        return std::nullopt;
    }
    case LineReader::Status::TooLong:
        *failure = {"rule_violation", "the runner answered " + during + " with a line over " +
                                          std::to_string(kMaxLine) + " bytes (out of protocol)"};
        return std::nullopt;
    case LineReader::Status::Error:
        *failure = {"runtime_error", "reading the runner's reply to " + during + " failed"};
        return std::nullopt;
    }
    std::string error;
    std::optional<Reply> r = parseReply(line, &error);
    if (!r) {
        *failure = {"rule_violation",
                    "the runner answered " + during + " out of protocol (" + error + ")"};
        return std::nullopt;
    }
    if (r->kind == Reply::Kind::Fail) {
        *failure = {r->status, r->message, true};
        return std::nullopt;
    }
    if (r->kind != expected) {
        *failure = {"rule_violation", "the runner answered " + during + " with '" +
                                          toString(r->kind) + "' where '" + toString(expected) +
                                          "' was due (out of protocol)"};
        return std::nullopt;
    }
    // One command, one line: more is someone else writing on the runner's pipe.
    if (m_reader.pending()) {
        *failure = {"rule_violation", "the runner wrote more than one line in answer to " + during +
                                          " (out of protocol)"};
        return std::nullopt;
    }
    return r;
}

std::optional<Reply> RunnerLink::call(const std::string& command, Reply::Kind expected,
                                      double timeoutS, LinkFailure* failure) {
    const std::string verb = command.substr(0, command.find(' '));
    if (m_reader.pending()) {
        *failure = {"rule_violation", "the runner wrote before it was asked (before '" + verb +
                                          "', out of protocol)"};
        return std::nullopt;
    }
    const double t0 = monotonicSeconds();
    if (!writeAll(m_writeFd, command + "\n", timeoutS)) {
        *failure = {"runtime_error",
                    "the runner ended during '" + verb + "' (it no longer reads its commands)"};
        return std::nullopt;
    }
    std::optional<Reply> r = expect(expected, "'" + verb + "'", timeoutS, failure);
    m_lastWallS = monotonicSeconds() - t0;
    return r;
}

std::string toHex(const void* data, size_t bytes) {
    static const char* digits = "0123456789abcdef";
    const auto* p = static_cast<const unsigned char*>(data);
    std::string s(2 * bytes, '0');
    for (size_t i = 0; i < bytes; ++i) {
        s[2 * i] = digits[p[i] >> 4];
        s[2 * i + 1] = digits[p[i] & 15];
    }
    return s;
}

bool fromHex(const std::string& text, void* data, size_t bytes) {
    if (text.size() != 2 * bytes) {
        return false;
    }
    auto* p = static_cast<unsigned char*>(data);
    const auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        return -1;
    };
    for (size_t i = 0; i < bytes; ++i) {
        const int hi = nibble(text[2 * i]);
        const int lo = nibble(text[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return false;
        }
        p[i] = static_cast<unsigned char>(hi << 4 | lo);
    }
    return true;
}

std::optional<std::string> implausibleTiming(const std::vector<TimingClaim>& candidate,
                                             const std::vector<TimingClaim>& reference,
                                             double floorMs, const PlausibilityRule& rule,
                                             TimingFigures* figures) {
    char buf[512];
    std::vector<double> claims, excess, refExcess;
    for (size_t i = 0; i < candidate.size(); ++i) {
        const TimingClaim& c = candidate[i];
        if (c.claimedMs > c.wallMs + rule.clockSlackMs) {
            std::snprintf(buf, sizeof buf,
                          "the runner claimed %.4f ms for candidate sample %zu, longer than the "
                          "%.4f ms the verifier waited for it",
                          c.claimedMs, i, c.wallMs);
            return std::string(buf);
        }
        claims.push_back(c.claimedMs);
        excess.push_back(c.wallMs - c.claimedMs);
    }
    for (const TimingClaim& r : reference) {
        refExcess.push_back(std::max(0.0, r.wallMs - r.claimedMs));
    }
    if (claims.empty()) {
        return std::nullopt;
    }
    const double claim = median(claims);
    const double calibration = median(refExcess);
    const double hidden = median(excess) - calibration;
    const double allowed = rule.absoluteSlackMs + rule.relativeSlack * claim;
    if (figures) {
        *figures = {claim, median(excess), calibration, hidden, allowed};
    }
    if (floorMs > 0 && claim < 0.5 * floorMs) {
        std::snprintf(buf, sizeof buf,
                      "the runner's median candidate time %.4f ms is under half the roofline's "
                      "floor %.4f ms for this task on this device",
                      claim, floorMs);
        return std::string(buf);
    }
    if (hidden > allowed) {
        if (figures) {
            figures->statistical = true;
        }
        std::snprintf(buf, sizeof buf,
                      "the runner's candidate samples took %.4f ms of wall-clock time beyond their "
                      "claimed %.4f ms (median), against %.4f ms beyond the event time in the "
                      "verifier's own samples: %.4f ms unaccounted for, more than the %.4f ms "
                      "allowed",
                      median(excess), claim, calibration, hidden, allowed);
        return std::string(buf);
    }
    return std::nullopt;
}

} // namespace kev::link
