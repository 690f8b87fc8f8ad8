#include "json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace kev::json {

const char* typeName(Type type) {
    switch (type) {
    case Type::Null:
        return "null";
    case Type::Bool:
        return "a boolean";
    case Type::Number:
        return "a number";
    case Type::String:
        return "a string";
    case Type::Array:
        return "an array";
    case Type::Object:
        return "an object";
    }
    return "?";
}

ParseError::ParseError(const std::string& message, int line, int column)
    : std::runtime_error(std::to_string(line) + ":" + std::to_string(column) + ": " + message)
    , m_line(line)
    , m_column(column) {}

Value::Value(bool b)
    : m_type(Type::Bool)
    , m_bool(b) {}
Value::Value(int i)
    : m_type(Type::Number)
    , m_num(NumKind::Int)
    , m_int(i) {}
Value::Value(int64_t i)
    : m_type(Type::Number)
    , m_num(NumKind::Int)
    , m_int(i) {}
Value::Value(uint64_t u)
    : m_type(Type::Number) {
    if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        m_num = NumKind::Int;
        m_int = static_cast<int64_t>(u);
    } else {
        m_num = NumKind::Uint;
        m_uint = u;
    }
}
Value::Value(double d)
    : m_type(Type::Number)
    , m_num(NumKind::Double)
    , m_double(d) {}
Value::Value(const char* s)
    : m_type(Type::String)
    , m_string(s ? s : "") {}
Value::Value(std::string s)
    : m_type(Type::String)
    , m_string(std::move(s)) {}
Value::Value(std::string_view s)
    : m_type(Type::String)
    , m_string(s) {}

Value Value::object() {
    Value v;
    v.m_type = Type::Object;
    return v;
}

Value Value::array() {
    Value v;
    v.m_type = Type::Array;
    return v;
}

void Value::requireType(Type wanted) const {
    if (m_type != wanted)
        throw TypeError(std::string("expected ") + typeName(wanted) + ", got " + typeName(m_type));
}

bool Value::asBool() const {
    requireType(Type::Bool);
    return m_bool;
}

double Value::asDouble() const {
    requireType(Type::Number);
    switch (m_num) {
    case NumKind::Int:
        return static_cast<double>(m_int);
    case NumKind::Uint:
        return static_cast<double>(m_uint);
    case NumKind::Double:
        break;
    }
    return m_double;
}

int64_t Value::asInt() const {
    requireType(Type::Number);
    switch (m_num) {
    case NumKind::Int:
        return m_int;
    case NumKind::Uint:
        throw TypeError("expected an integer that fits in 64 signed bits, got " + dump());
    case NumKind::Double:
        break;
    }
    // 2^63 is exactly representable; anything below it with no fraction converts exactly.
    if (std::isfinite(m_double) && std::floor(m_double) == m_double && m_double >= -0x1p63 &&
        m_double < 0x1p63)
        return static_cast<int64_t>(m_double);
    throw TypeError("expected an integer, got " + dump());
}

uint64_t Value::asUint() const {
    requireType(Type::Number);
    switch (m_num) {
    case NumKind::Int:
        if (m_int < 0)
            throw TypeError("expected a non-negative integer, got " + dump());
        return static_cast<uint64_t>(m_int);
    case NumKind::Uint:
        return m_uint;
    case NumKind::Double:
        break;
    }
    if (std::isfinite(m_double) && std::floor(m_double) == m_double && m_double >= 0 &&
        m_double < 0x1p64)
        return static_cast<uint64_t>(m_double);
    throw TypeError("expected a non-negative integer, got " + dump());
}

const std::string& Value::asString() const {
    requireType(Type::String);
    return m_string;
}

Value& Value::operator[](const std::string& key) {
    if (m_type == Type::Null)
        m_type = Type::Object;
    requireType(Type::Object);
    for (auto& member : m_members) {
        if (member.first == key)
            return member.second;
    }
    m_members.emplace_back(key, Value());
    return m_members.back().second;
}

const Value* Value::find(std::string_view key) const {
    if (m_type != Type::Object)
        return nullptr;
    for (const auto& member : m_members) {
        if (member.first == key)
            return &member.second;
    }
    return nullptr;
}

Value* Value::find(std::string_view key) {
    return const_cast<Value*>(static_cast<const Value*>(this)->find(key));
}

bool Value::erase(std::string_view key) {
    if (m_type != Type::Object)
        return false;
    for (auto it = m_members.begin(); it != m_members.end(); ++it) {
        if (it->first == key) {
            m_members.erase(it);
            return true;
        }
    }
    return false;
}

void Value::push(Value v) {
    if (m_type == Type::Null)
        m_type = Type::Array;
    requireType(Type::Array);
    m_elements.push_back(std::move(v));
}

const Value& Value::at(size_t index) const {
    requireType(Type::Array);
    if (index >= m_elements.size())
        throw std::out_of_range("json array index " + std::to_string(index) +
                                " out of range (size " + std::to_string(m_elements.size()) + ")");
    return m_elements[index];
}

Value& Value::at(size_t index) {
    return const_cast<Value&>(static_cast<const Value*>(this)->at(index));
}

size_t Value::size() const {
    if (m_type == Type::Array)
        return m_elements.size();
    if (m_type == Type::Object)
        return m_members.size();
    return 0;
}

const std::vector<Value>& Value::elements() const {
    requireType(Type::Array);
    return m_elements;
}

std::vector<Value>& Value::elements() {
    requireType(Type::Array);
    return m_elements;
}

const std::vector<std::pair<std::string, Value>>& Value::members() const {
    requireType(Type::Object);
    return m_members;
}

bool Value::operator==(const Value& other) const {
    if (m_type != other.m_type)
        return false;
    switch (m_type) {
    case Type::Null:
        return true;
    case Type::Bool:
        return m_bool == other.m_bool;
    case Type::Number:
        if (m_num == NumKind::Double || other.m_num == NumKind::Double)
            return asDouble() == other.asDouble();
        if (m_num != other.m_num)
            return false;
        return m_num == NumKind::Int ? m_int == other.m_int : m_uint == other.m_uint;
    case Type::String:
        return m_string == other.m_string;
    case Type::Array:
        return m_elements == other.m_elements;
    case Type::Object:
        return m_members == other.m_members;
    }
    return false;
}

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one (overlong forms,
// surrogates and code points above U+10FFFF are invalid, as RFC 3629 says).
size_t utf8SequenceLength(std::string_view s, size_t i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char b0 = byte(i);
    if (b0 < 0x80)
        return 1;
    size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        len = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        len = 3;
        if (b0 == 0xE0)
            lo = 0xA0;
        else if (b0 == 0xED)
            hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        len = 4;
        if (b0 == 0xF0)
            lo = 0x90;
        else if (b0 == 0xF4)
            hi = 0x8F;
    } else {
        return 0;
    }
    if (i + len > s.size())
        return 0;
    if (byte(i + 1) < lo || byte(i + 1) > hi)
        return 0;
    for (size_t k = 2; k < len; ++k) {
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF)
            return 0;
    }
    return len;
}

void appendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

void appendDouble(std::string& out, double d) {
    if (!std::isfinite(d)) {
        out += "null";
        return;
    }
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, d);
    const std::string_view text(buf, static_cast<size_t>(res.ptr - buf));
    out += text;
    // Keep a double a double when read back.
    if (text.find_first_of(".eE") == std::string_view::npos)
        out += ".0";
}

void newline(std::string& out, int indent, int level) {
    out += '\n';
    out.append(static_cast<size_t>(indent) * static_cast<size_t>(level), ' ');
}

} // namespace

void appendQuoted(std::string& out, std::string_view s) {
    static const char* const hex = "0123456789abcdef";
    out += '"';
    size_t i = 0;
    while (i < s.size()) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            const size_t len = utf8SequenceLength(s, i);
            if (len == 0) {
                out += "\xEF\xBF\xBD";
                ++i;
            } else {
                out.append(s.substr(i, len));
                i += len;
            }
            continue;
        }
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (c < 0x20) {
                out += "\\u00";
                out += hex[c >> 4];
                out += hex[c & 0xF];
            } else {
                out += static_cast<char>(c);
            }
        }
        ++i;
    }
    out += '"';
}

void Value::dumpTo(std::string& out, int indent, int level) const {
    switch (m_type) {
    case Type::Null:
        out += "null";
        return;
    case Type::Bool:
        out += m_bool ? "true" : "false";
        return;
    case Type::Number:
        if (m_num == NumKind::Int)
            out += std::to_string(m_int);
        else if (m_num == NumKind::Uint)
            out += std::to_string(m_uint);
        else
            appendDouble(out, m_double);
        return;
    case Type::String:
        appendQuoted(out, m_string);
        return;
    case Type::Array:
        if (m_elements.empty()) {
            out += "[]";
            return;
        }
        out += '[';
        for (size_t i = 0; i < m_elements.size(); ++i) {
            if (i > 0)
                out += ',';
            if (indent >= 0)
                newline(out, indent, level + 1);
            m_elements[i].dumpTo(out, indent, level + 1);
        }
        if (indent >= 0)
            newline(out, indent, level);
        out += ']';
        return;
    case Type::Object:
        if (m_members.empty()) {
            out += "{}";
            return;
        }
        out += '{';
        for (size_t i = 0; i < m_members.size(); ++i) {
            if (i > 0)
                out += ',';
            if (indent >= 0)
                newline(out, indent, level + 1);
            appendQuoted(out, m_members[i].first);
            out += indent >= 0 ? ": " : ":";
            m_members[i].second.dumpTo(out, indent, level + 1);
        }
        if (indent >= 0)
            newline(out, indent, level);
        out += '}';
        return;
    }
}

std::string Value::dump(int indent) const {
    std::string out;
    dumpTo(out, indent, 0);
    return out;
}

namespace {

class Parser {
public:
    explicit Parser(std::string_view text)
        : m_text(text) {}

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
        if (depth > kMaxDepth)
            fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
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
        for (;;) {
            skipWhitespace();
            if (m_pos >= m_text.size() || m_text[m_pos] != '"')
                fail("expected a string key, got " + describeHere());
            const size_t keyPos = m_pos;
            std::string key = parseString();
            if (obj.contains(key))
                failAt(keyPos, "duplicate key \"" + key + "\"");
            skipWhitespace();
            if (m_pos >= m_text.size() || m_text[m_pos] != ':')
                fail("expected ':' after an object key, got " + describeHere());
            ++m_pos;
            skipWhitespace();
            obj[key] = parseValue(depth);
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
            arr.push(parseValue(depth));
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
                const size_t len = utf8SequenceLength(m_text, m_pos);
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
                appendUtf8(out, cp);
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
    size_t m_pos = 0;
};

} // namespace

Value parse(std::string_view text) {
    return Parser(text).parseDocument();
}

std::optional<Value> tryParse(std::string_view text, std::string* error) {
    try {
        return parse(text);
    } catch (const ParseError& e) {
        if (error)
            *error = e.what();
        return std::nullopt;
    }
}

} // namespace kev::json
