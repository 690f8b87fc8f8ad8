// The strict RFC 8259 reader, linear in its input and bounded by json::Limits.
#include "json.h"
#include "json_utf8.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_set>

namespace kev::json {

Limits requestLimits() {
    Limits l;
    l.maxDepth = 64;
    l.maxMembers = 4096;
    l.maxElements = size_t{1} << 16;
    l.maxValues = size_t{1} << 18;
    return l;
}

namespace detail {

class Parser {
public:
    Parser(std::string_view text, const Limits& limits)
        : m_text(text)
        , m_limits(limits) {}

    Value parseDocument() {
        // RFC 8259 lets a parser ignore a byte order mark; editors on some systems write one.
        if (m_text.substr(0, 3) == "\xEF\xBB\xBF")
            m_pos = 3;
        skipWhitespace();
        Value v = parseValue(0);
        skipWhitespace();
        if (m_pos != m_text.size())
            fail("expected the end of the document after the value, got " + describeHere());
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& message) const { failAt(m_pos, message); }

    [[noreturn]] void failAt(size_t pos, const std::string& message) const {
        int line = 1;
        size_t lineStart = 0;
        for (size_t i = 0; i < pos && i < m_text.size(); ++i) {
            if (m_text[i] == '\n') {
                ++line;
                lineStart = i + 1;
            }
        }
        throw ParseError(message, line, static_cast<int>(pos - lineStart) + 1);
    }

    std::string describeHere() const {
        if (m_pos >= m_text.size())
            return "the end of the input";
        const unsigned char c = static_cast<unsigned char>(m_text[m_pos]);
        if (c >= 0x21 && c < 0x7F)
            return std::string("'") + static_cast<char>(c) + "'";
        char buf[16];
        std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
        return buf;
    }

    void skipWhitespace() {
        while (m_pos < m_text.size()) {
            const char c = m_text[m_pos];
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
                break;
            ++m_pos;
        }
    }

    bool consumeLiteral(std::string_view word) {
        if (m_text.substr(m_pos, word.size()) != word)
            return false;
        m_pos += word.size();
        return true;
    }

    Value parseValue(int depth) {
        if (m_pos >= m_text.size())
            fail("expected a value, got the end of the input");
        if (++m_values > m_limits.maxValues)
            fail("more than " + std::to_string(m_limits.maxValues) + " values in one document");
        const char c = m_text[m_pos];
        switch (c) {
        case '{':
            return parseObject(depth + 1);
        case '[':
            return parseArray(depth + 1);
        case '"':
            return Value(parseString());
        case 't':
            if (consumeLiteral("true"))
                return Value(true);
            break;
        case 'f':
            if (consumeLiteral("false"))
                return Value(false);
            break;
        case 'n':
            if (consumeLiteral("null"))
                return Value();
            break;
        default:
            if (c == '-' || (c >= '0' && c <= '9'))
                return parseNumber();
        }
        fail("expected a value, got " + describeHere());
    }

    void checkDepth(int depth) const {
        if (depth > m_limits.maxDepth)
            fail("nesting deeper than " + std::to_string(m_limits.maxDepth) + " levels");
    }

    Value parseObject(int depth) {
        checkDepth(depth);
        ++m_pos;
        Value obj = Value::object();
        skipWhitespace();
        if (m_pos < m_text.size() && m_text[m_pos] == '}') {
            ++m_pos;
            return obj;
        }
        // Duplicate keys are found by a linear scan while the object is small and through a hash
        // set beyond that, so an object of n keys parses in O(n), not O(n^2).
        constexpr size_t kScanLimit = 16;
        std::unordered_set<std::string> seen;
        auto& members = obj.m_members;
        for (;;) {
            skipWhitespace();
            if (m_pos >= m_text.size() || m_text[m_pos] != '"')
                fail("expected a string key, got " + describeHere());
            const size_t keyPos = m_pos;
            std::string key = parseString();
            if (members.size() >= m_limits.maxMembers)
                failAt(keyPos,
                       "an object with more than " + std::to_string(m_limits.maxMembers) + " keys");
            bool duplicate = false;
            if (members.size() < kScanLimit) {
                for (const auto& m : members)
                    duplicate = duplicate || m.first == key;
            } else {
                if (seen.empty()) {
                    for (const auto& m : members)
                        seen.insert(m.first);
                }
                duplicate = !seen.insert(key).second;
            }
            if (duplicate)
                failAt(keyPos, "duplicate key \"" + key + "\"");
            skipWhitespace();
            if (m_pos >= m_text.size() || m_text[m_pos] != ':')
                fail("expected ':' after an object key, got " + describeHere());
            ++m_pos;
            skipWhitespace();
            Value value = parseValue(depth);
            members.emplace_back(std::move(key), std::move(value));
            skipWhitespace();
            if (m_pos < m_text.size() && m_text[m_pos] == ',') {
                ++m_pos;
                continue;
            }
            if (m_pos < m_text.size() && m_text[m_pos] == '}') {
                ++m_pos;
                return obj;
            }
            fail("expected ',' or '}' after an object member, got " + describeHere());
        }
    }

    Value parseArray(int depth) {
        checkDepth(depth);
        ++m_pos;
        Value arr = Value::array();
        skipWhitespace();
        if (m_pos < m_text.size() && m_text[m_pos] == ']') {
            ++m_pos;
            return arr;
        }
        for (;;) {
            skipWhitespace();
            if (arr.m_elements.size() >= m_limits.maxElements)
                fail("an array with more than " + std::to_string(m_limits.maxElements) +
                     " elements");
            arr.m_elements.push_back(parseValue(depth));
            skipWhitespace();
            if (m_pos < m_text.size() && m_text[m_pos] == ',') {
                ++m_pos;
                continue;
            }
            if (m_pos < m_text.size() && m_text[m_pos] == ']') {
                ++m_pos;
                return arr;
            }
            fail("expected ',' or ']' after an array element, got " + describeHere());
        }
    }

    uint32_t parseHex4() {
        if (m_pos + 4 > m_text.size())
            fail("expected four hex digits after \\u");
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = m_text[m_pos];
            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= static_cast<uint32_t>(c - '0');
            else if (c >= 'a' && c <= 'f')
                v |= static_cast<uint32_t>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                v |= static_cast<uint32_t>(c - 'A' + 10);
            else
                fail("expected a hex digit in a \\u escape, got " + describeHere());
            ++m_pos;
        }
        return v;
    }

    std::string parseString() {
        ++m_pos;
        std::string out;
        for (;;) {
            if (m_pos >= m_text.size())
                fail("expected '\"' to end the string, got the end of the input");
            const unsigned char c = static_cast<unsigned char>(m_text[m_pos]);
            if (c == '"') {
                ++m_pos;
                return out;
            }
            if (c < 0x20)
                fail("control character in a string must be escaped (" + describeHere() + ")");
            if (c >= 0x80) {
                const size_t len = detail::utf8SequenceLength(m_text, m_pos);
                if (len == 0)
                    fail("invalid UTF-8 in a string (" + describeHere() + ")");
                out.append(m_text.substr(m_pos, len));
                m_pos += len;
                continue;
            }
            if (c != '\\') {
                out += static_cast<char>(c);
                ++m_pos;
                continue;
            }
            const size_t escapePos = m_pos;
            ++m_pos;
            if (m_pos >= m_text.size())
                fail("expected an escape character after '\\', got the end of the input");
            const char e = m_text[m_pos++];
            switch (e) {
            case '"':
                out += '"';
                break;
            case '\\':
                out += '\\';
                break;
            case '/':
                out += '/';
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u': {
                uint32_t cp = parseHex4();
                if (cp >= 0xDC00 && cp <= 0xDFFF)
                    failAt(escapePos, "lone low surrogate in a \\u escape");
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    if (m_text.substr(m_pos, 2) != "\\u")
                        failAt(escapePos, "high surrogate not followed by a \\u low surrogate");
                    m_pos += 2;
                    const uint32_t low = parseHex4();
                    if (low < 0xDC00 || low > 0xDFFF)
                        failAt(escapePos, "high surrogate not followed by a low surrogate");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                }
                detail::appendUtf8(out, cp);
                break;
            }
            default:
                failAt(escapePos, std::string("invalid escape '\\") + e + "' in a string");
            }
        }
    }

    Value parseNumber() {
        const size_t start = m_pos;
        const auto digit = [&] {
            return m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9';
        };
        if (m_text[m_pos] == '-')
            ++m_pos;
        if (!digit())
            fail("expected a digit in a number, got " + describeHere());
        if (m_text[m_pos] == '0') {
            ++m_pos;
            if (digit())
                fail("leading zeros are not allowed in a number");
        } else {
            while (digit())
                ++m_pos;
        }
        bool integral = true;
        if (m_pos < m_text.size() && m_text[m_pos] == '.') {
            integral = false;
            ++m_pos;
            if (!digit())
                fail("expected a digit after the decimal point, got " + describeHere());
            while (digit())
                ++m_pos;
        }
        if (m_pos < m_text.size() && (m_text[m_pos] == 'e' || m_text[m_pos] == 'E')) {
            integral = false;
            ++m_pos;
            if (m_pos < m_text.size() && (m_text[m_pos] == '+' || m_text[m_pos] == '-'))
                ++m_pos;
            if (!digit())
                fail("expected a digit in the exponent, got " + describeHere());
            while (digit())
                ++m_pos;
        }
        const char* first = m_text.data() + start;
        const char* last = m_text.data() + m_pos;
        if (integral) {
            int64_t i = 0;
            auto res = std::from_chars(first, last, i);
            if (res.ec == std::errc() && res.ptr == last)
                return Value(i);
            uint64_t u = 0;
            res = std::from_chars(first, last, u);
            if (res.ec == std::errc() && res.ptr == last)
                return Value(u);
        }
        double d = 0;
        const auto res = std::from_chars(first, last, d);
        if (res.ec == std::errc::result_out_of_range) {
            // Underflow to zero loses nothing a measurement could need; overflow has no JSON form.
            if (std::fabs(std::strtod(std::string(first, last).c_str(), nullptr)) < 1.0)
                return Value(0.0);
            failAt(start, "number out of the range of a double");
        }
        if (res.ec != std::errc() || res.ptr != last)
            failAt(start, "malformed number");
        return Value(d);
    }

    std::string_view m_text;
    const Limits& m_limits;
    size_t m_pos = 0;
    size_t m_values = 0;
};

} // namespace detail

Value parse(std::string_view text, const Limits& limits) {
    return detail::Parser(text, limits).parseDocument();
}

std::optional<Value> tryParse(std::string_view text, std::string* error, const Limits& limits) {
    try {
        return parse(text, limits);
    } catch (const ParseError& e) {
        if (error)
            *error = e.what();
        return std::nullopt;
    }
}

} // namespace kev::json
