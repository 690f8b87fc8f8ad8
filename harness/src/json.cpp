#include "json.h"
#include "json_utf8.h"

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

std::optional<int64_t> Value::toInt() const {
    if (m_type != Type::Number || m_num == NumKind::Uint)
        return std::nullopt;
    if (m_num == NumKind::Int)
        return m_int;
    if (std::isfinite(m_double) && std::floor(m_double) == m_double && m_double >= -0x1p63 &&
        m_double < 0x1p63)
        return static_cast<int64_t>(m_double);
    return std::nullopt;
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

namespace detail {

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

} // namespace detail

namespace {

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
            const size_t len = detail::utf8SequenceLength(s, i);
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

} // namespace kev::json
