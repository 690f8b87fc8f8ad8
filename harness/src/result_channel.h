#pragma once
// Strict readers for what an untrusted process says on a pipe (harness/THREAT_MODEL.md, class 8).
//
// Two layers:
//  - LineReader: a line-framed, bounded byte reader. Bytes go in as they arrive; complete lines
//    ('\n'-terminated, without the '\n') come out. It never holds more than one line's limit, and
//    the FIRST thing outside the framing ends the stream with a Violation that says what, where
//    (byte offset, line number) and shows an escaped excerpt: a line over maxLineBytes, a stream
//    over maxTotalBytes, more than maxLines lines, a control byte or NUL inside a text line, or
//    bytes after the end of input that never got their '\n'. After a violation every further byte
//    is only counted, never kept, so a flood costs memory of one excerpt. Nothing is silently
//    dropped: a caller that sees ok() == false must refuse the whole stream.
//  - ResultProtocol: the GPU child's protocol on its result descriptor (PROTOCOL.md): every line
//    is one JSON object whose "type" is one of the allowed types, "result" lines carry the
//    supervisor's token and there is exactly one of them, nothing after it. Anything else (junk,
//    an unknown type, a line without or with another token, a second result, a line after the
//    result) refuses the channel through the same Violation.
//
// Both are generic: the verifier channel (runner <-> trusted verifier) uses LineReader with its
// own limits and a ResultProtocol with its own types and token.
#include "json.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kev::channel {

struct Limits {
    size_t maxLineBytes = 16u << 20;  // one line without its '\n'
    size_t maxTotalBytes = 32u << 20; // the whole stream
    size_t maxLines = 10000;
    bool textOnly = true; // bytes below 0x20 other than '\t' (and a final '\r') are refused
};

struct Violation {
    // "line_too_long", "stream_too_long", "too_many_lines", "control_byte", "unterminated_line",
    // or the protocol's: "not_json", "not_an_object", "unknown_type", "missing_token",
    // "wrong_token", "second_result", "after_result", "no_result".
    std::string kind;
    std::string message; // one sentence naming the problem
    uint64_t offset = 0; // byte offset of the offending line's start in the stream
    uint64_t line = 0;   // 1-based number of that line
    std::string excerpt; // at most kExcerptBytes of it, non-printable bytes as \xNN
};

constexpr size_t kExcerptBytes = 96;

// `text` cut to `limit` bytes with every byte outside printable ASCII written as \xNN.
std::string escapeExcerpt(const char* data, size_t n, size_t limit = kExcerptBytes);

class LineReader {
public:
    explicit LineReader(Limits limits = {});

    // Takes the next bytes of the stream. Cheap after a violation (the bytes are only counted).
    void feed(const char* data, size_t n);
    // End of the stream: a last line without its '\n' is an unterminated_line violation.
    void close();
    // The complete lines accepted since the last call, in order. Lines up to the violation are
    // still returned (the caller decides what they are worth).
    std::vector<std::string> take();
    // A layer above refuses a line's content; the first violation wins.
    void refuse(Violation v);

    bool ok() const { return !m_violation.has_value(); }
    const std::optional<Violation>& violation() const { return m_violation; }
    uint64_t bytes() const { return m_bytes; } // everything fed, violation included
    uint64_t lines() const { return m_lines; } // complete lines accepted
    const Limits& limits() const { return m_limits; }
    // {ok, bytes, lines, violation: {kind, message, offset, line, excerpt}}
    json::Value toJson() const;

private:
    void fail(const char* kind, const std::string& message, const char* data, size_t n);

    Limits m_limits;
    std::string m_partial;
    std::vector<std::string> m_complete;
    uint64_t m_bytes = 0;
    uint64_t m_lines = 0;
    uint64_t m_lineStart = 0; // offset of the line being assembled
    bool m_closed = false;
    std::optional<Violation> m_violation;
};

// One accepted protocol line.
struct Message {
    std::string type;
    json::Value value; // the parsed object, the token removed
};

class ResultProtocol {
public:
    // `types`: the allowed values of "type"; `resultType` is the one that must come exactly once,
    // last, carrying `token` (empty: no token required).
    ResultProtocol(std::string token, std::set<std::string> types = {"progress", "ready", "result"},
                   std::string resultType = "result");

    // Checks the next line taken from `reader` (every line, in order: the protocol counts them to
    // name a refused line's number and offset); returns the message, or nullopt after refusing
    // the reader.
    std::optional<Message> accept(LineReader& reader, const std::string& line);
    // At the end of the stream: whether exactly one result arrived (refuses the reader when not
    // and `requireResult` is set).
    bool finish(LineReader& reader, bool requireResult);
    bool haveResult() const { return m_haveResult; }

private:
    std::string m_token;
    std::set<std::string> m_types;
    std::string m_resultType;
    bool m_haveResult = false;
    uint64_t m_seen = 0;
    uint64_t m_offset = 0;
};

} // namespace kev::channel
