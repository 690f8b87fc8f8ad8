#include "result_channel.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace kev::channel {

std::string escapeExcerpt(const char* data, size_t n, size_t limit) {
    std::string out;
    const size_t take = std::min(n, limit);
    for (size_t i = 0; i < take; ++i) {
        const auto c = static_cast<unsigned char>(data[i]);
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out.push_back(static_cast<char>(c));
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        }
    }
    if (n > take)
        out += "...";
    return out;
}

LineReader::LineReader(Limits limits)
    : m_limits(limits) {}

void LineReader::fail(const char* kind, const std::string& message, const char* data, size_t n) {
    if (m_violation)
        return;
    Violation v;
    v.kind = kind;
    v.message = message;
    v.offset = m_lineStart;
    v.line = m_lines + 1;
    v.excerpt = escapeExcerpt(data, n);
    m_violation = std::move(v);
    // Nothing more is kept: a flood after the violation costs no memory.
    std::string().swap(m_partial);
}

void LineReader::refuse(Violation v) {
    if (m_violation)
        return;
    m_violation = std::move(v);
    std::string().swap(m_partial);
}

void LineReader::feed(const char* data, size_t n) {
    const uint64_t before = m_bytes;
    m_bytes += n;
    size_t i = 0;
    while (i < n && !m_violation) {
        const uint64_t pos = before + i;
        if (m_closed) {
            fail("after_close", "bytes arrived after the end of the stream", data + i, n - i);
            break;
        }
        if (pos >= m_limits.maxTotalBytes) {
            fail("stream_too_long",
                 "the stream is longer than its limit of " +
                     std::to_string(m_limits.maxTotalBytes) + " bytes",
                 data + i, n - i);
            break;
        }
        const size_t avail =
            static_cast<size_t>(std::min<uint64_t>(n - i, m_limits.maxTotalBytes - pos));
        const void* nl = std::memchr(data + i, '\n', avail);
        const size_t segment =
            nl ? static_cast<size_t>(static_cast<const char*>(nl) - (data + i)) : avail;
        if (m_partial.size() + segment > m_limits.maxLineBytes) {
            const std::string head = m_partial.empty() ? std::string(data + i, segment) : m_partial;
            fail("line_too_long",
                 "line " + std::to_string(m_lines + 1) + " is longer than its limit of " +
                     std::to_string(m_limits.maxLineBytes) + " bytes",
                 head.data(), head.size());
            break;
        }
        m_partial.append(data + i, segment);
        i += segment;
        if (!nl)
            continue;
        ++i; // the '\n'
        if (m_partial.size() > 0 && m_partial.back() == '\r')
            m_partial.pop_back();
        if (m_limits.textOnly) {
            for (size_t k = 0; k < m_partial.size(); ++k) {
                const auto c = static_cast<unsigned char>(m_partial[k]);
                if (c >= 0x20 || c == '\t')
                    continue;
                char hex[8];
                std::snprintf(hex, sizeof hex, "0x%02x", c);
                const size_t from = k > 32 ? k - 32 : 0;
                fail("control_byte",
                     "line " + std::to_string(m_lines + 1) + " holds the control byte " + hex +
                         " at byte " + std::to_string(k) + " (the channel carries text lines)",
                     m_partial.data() + from, m_partial.size() - from);
                break;
            }
            if (m_violation)
                break;
        }
        if (m_lines >= m_limits.maxLines) {
            fail("too_many_lines",
                 "more than " + std::to_string(m_limits.maxLines) + " lines on the channel",
                 m_partial.data(), m_partial.size());
            break;
        }
        m_complete.push_back(std::move(m_partial));
        m_partial.clear();
        ++m_lines;
        m_lineStart = before + i;
    }
}

void LineReader::close() {
    if (m_closed)
        return;
    m_closed = true;
    if (!m_violation && !m_partial.empty()) {
        const std::string partial = m_partial;
        fail("unterminated_line",
             "the stream ended inside line " + std::to_string(m_lines + 1) + " (" +
                 std::to_string(partial.size()) + " bytes without a newline)",
             partial.data(), partial.size());
    }
}

std::vector<std::string> LineReader::take() {
    std::vector<std::string> out;
    out.swap(m_complete);
    return out;
}

json::Value LineReader::toJson() const {
    json::Value v = json::Value::object();
    v["ok"] = ok();
    v["bytes"] = static_cast<int64_t>(m_bytes);
    v["lines"] = static_cast<int64_t>(m_lines);
    if (m_violation) {
        json::Value x = json::Value::object();
        x["kind"] = m_violation->kind;
        x["message"] = m_violation->message;
        x["offset"] = static_cast<int64_t>(m_violation->offset);
        x["line"] = static_cast<int64_t>(m_violation->line);
        x["excerpt"] = m_violation->excerpt;
        v["violation"] = std::move(x);
    }
    return v;
}

ResultProtocol::ResultProtocol(std::string token, std::set<std::string> types,
                               std::string resultType)
    : m_token(std::move(token))
    , m_types(std::move(types))
    , m_resultType(std::move(resultType)) {
    m_types.insert(m_resultType);
}

std::optional<Message> ResultProtocol::accept(LineReader& reader, const std::string& line) {
    ++m_seen;
    const uint64_t offset = m_offset;
    m_offset += line.size() + 1;
    if (!reader.ok())
        return std::nullopt;
    const std::string where = "line " + std::to_string(m_seen);
    const auto refuse = [&](const char* kind, const std::string& message) {
        Violation v;
        v.kind = kind;
        v.message = message;
        v.offset = offset;
        v.line = m_seen;
        v.excerpt = escapeExcerpt(line.data(), line.size());
        reader.refuse(std::move(v));
        return std::nullopt;
    };
    if (m_haveResult)
        return refuse("after_result",
                      where + " follows the " + m_resultType + " line, which must be the last");
    std::string error;
    std::optional<json::Value> v = json::tryParse(line, &error);
    if (!v)
        return refuse("not_json", where + " is not JSON (" + error + ")");
    if (!v->isObject())
        return refuse("not_an_object", where + " is JSON but not an object");
    const json::Value* type = v->find("type");
    if (!type || !type->isString())
        return refuse("unknown_type", where + " has no string \"type\"");
    if (!m_types.count(type->asString())) {
        std::string allowed;
        for (const auto& t : m_types)
            allowed += (allowed.empty() ? "" : ", ") + t;
        return refuse("unknown_type",
                      where + " has the type \"" + type->asString() + "\", not one of " + allowed);
    }
    Message m;
    m.type = type->asString();
    if (m.type == m_resultType) {
        if (!m_token.empty()) {
            const json::Value* token = v->find("token");
            if (!token || !token->isString())
                return refuse("missing_token", where + " is a " + m_resultType +
                                                   " without the child's token (forged)");
            if (token->asString() != m_token)
                return refuse("wrong_token", where + " is a " + m_resultType +
                                                 " with another token than the child's (forged)");
        }
        v->erase("token");
        m_haveResult = true;
    }
    m.value = std::move(*v);
    return m;
}

bool ResultProtocol::finish(LineReader& reader, bool requireResult) {
    if (requireResult && !m_haveResult && reader.ok()) {
        Violation v;
        v.kind = "no_result";
        v.message = "the stream ended without a " + m_resultType + " line";
        v.offset = m_offset;
        v.line = m_seen + 1;
        reader.refuse(std::move(v));
    }
    return m_haveResult && reader.ok();
}

} // namespace kev::channel
